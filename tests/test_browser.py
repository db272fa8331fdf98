"""The real app in a real browser: `streamlit run app.py` on loopback, driven by Playwright + Chromium."""

import pytest

from tests.helpers.browser import assert_no_errors, browser, go_to, needs_chromium, running_app, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]


def test_deep_link_then_translate_step_and_attention_in_a_browser():
    with running_app() as url, browser() as chromium:
        page = chromium.new_page(viewport={"width": 1400, "height": 1800})
        requests: list[str] = []
        page.on("request", lambda request: requests.append(request.url))
        # The very first request to a fresh server is a deep link (a speaker's prepared view).
        page.goto(f"{url}/attention?text=My+brother+is+a+doctor.&kind=encoder+self-attention&layer=2&head=3")
        wait_for_app(page, charts=3)
        assert page.locator("h1").first.inner_text() == "Attention, head by head"
        assert "encoder self-attention · layer 2 · head 3" in page.locator(".js-plotly-plot").first.inner_text()
        assert page.get_by_text("Page not found").count() == 0
        assert_no_errors(page)

        page.goto(url)
        wait_for_app(page, charts=3)
        box = page.get_by_role("textbox", name="English sentence")
        box.fill("Tom is taller than Mary.")
        box.press("Control+Enter")
        page.wait_for_function("() => document.body.innerText.includes('汤姆比玛丽高')", timeout=60_000)
        wait_for_app(page, charts=3)
        assert "text=Tom+is+taller+than+Mary" in page.url
        page.get_by_role("button", name="Next").click()
        page.wait_for_function("() => document.body.innerText.includes('Step 2 of')", timeout=30_000)
        assert "step=2" in page.url
        page.get_by_role("button", name="Play").click()  # advances on its own, then stops at the end
        page.wait_for_function("() => /Step (\\d+) of \\1\\./.test(document.body.innerText)", timeout=60_000)
        page.get_by_role("button", name="Play").wait_for(timeout=30_000)
        assert_no_errors(page)

        go_to(page, "Attention", "Attention, head by head", charts=3)
        assert page.get_by_role("textbox", name="English sentence").input_value() == "Tom is taller than Mary."
        assert "汤姆比玛丽高" in page.locator("body").inner_text()
        assert_no_errors(page)
        # Talk-friendly: everything (scripts, fonts, plotly) comes from the app itself, no CDN.
        outside = [r for r in requests if not r.startswith((url, "data:", "blob:"))]
        assert not outside, outside[:5]


def test_upload_a_checkpoint_through_the_file_input_and_visit_every_page(trained_tiny, tmp_path):
    from core.io.checkpoint import save_checkpoint

    model, pipeline = trained_tiny
    checkpoint = save_checkpoint(tmp_path / "memorised.safetensors", model, pipeline)
    with running_app() as url, browser() as chromium:
        pages = (
            ("positions", "Positional encoding", 8),
            ("masks", "Masks", 7),
            ("compare", "Transformer vs. GRU with Bahdanau attention", 2),
        )
        for name, title, charts in pages:
            page = chromium.new_page(viewport={"width": 1400, "height": 1800})
            page.goto(f"{url}/{name}?text=Tom+is+taller+than+Mary.")
            wait_for_app(page, charts=charts)
            assert page.locator("h1").first.inner_text() == title
            assert_no_errors(page)
            page.close()

        page = chromium.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(f"{url}/models")
        wait_for_app(page, charts=2)
        page.locator("input[type='file']").set_input_files(str(checkpoint))
        page.wait_for_function("() => document.body.innerText.includes('Loaded memorised.safetensors')", timeout=60_000)
        assert_no_errors(page)
        go_to(page, "Translate", "Translate, step by step", charts=3)
        box = page.get_by_role("textbox", name="English sentence")
        box.fill("Tom likes tea.")
        box.press("Control+Enter")
        page.wait_for_function("() => document.body.innerText.includes('汤姆喜欢茶')", timeout=60_000)
        assert "Model: memorised.safetensors" in page.locator("[data-testid='stSidebar']").inner_text()
        go_to(page, "Explain", "Explain: what each output token draws on", charts=4)  # the upload, explained
        assert "Integrated gradients" in page.locator(".js-plotly-plot").first.inner_text()
        assert_no_errors(page)

        other = chromium.new_context().new_page()  # another person: a separate session
        other.goto(f"{url}/translate?text=Tom+likes+tea.")
        wait_for_app(other, charts=3)
        assert "Model: Shipped Transformer" in other.locator("[data-testid='stSidebar']").inner_text()
        assert_no_errors(other)


def test_switch_a_head_off_then_open_a_head_from_the_atlas():
    with running_app() as url, browser() as chromium:
        page = chromium.new_page(viewport={"width": 1400, "height": 2600})
        page.goto(f"{url}/heads?text=Tom+is+taller+than+Mary.")
        wait_for_app(page, charts=3)
        assert page.get_by_role("heading", name="All heads on").count() == 1
        page.get_by_role("button", name="head 4").nth(8).click()  # cross-attention, layer 3, head 4
        page.get_by_role("heading", name="1 of 36 heads switched off").wait_for(timeout=60_000)
        wait_for_app(page, charts=3)
        assert "ablate=cross%3A3%3A4" in page.url
        assert page.get_by_text("Heads switched off (Heads page): cross:3:4").count() == 1
        assert_no_errors(page)
        grid = page.locator(".js-plotly-plot").nth(1).bounding_box()  # the atlas: click encoder, layer 3, head 2
        page.mouse.click(grid["x"] + grid["width"] * 0.15, grid["y"] + grid["height"] * 0.6)
        page.wait_for_function(
            "() => document.body.innerText.includes('encoder self-attention · layer 3 · head 2')", timeout=60_000
        )
        assert_no_errors(page)


def test_the_explain_page_draws_every_method_and_steps_with_the_keyboard():
    with running_app() as url, browser() as chromium:
        page = chromium.new_page(viewport={"width": 1400, "height": 3400})
        page.goto(f"{url}/explain?text=My+brother+bought+a+new+car+last+week.")
        wait_for_app(page, charts=4)
        assert page.locator("h1").first.inner_text() == "Explain: what each output token draws on"
        grid = page.locator(".js-plotly-plot").first.inner_text()
        for title in ("Raw cross-attention", "Norm-based attention", "Attention rollout", "Integrated gradients"):
            assert title in grid
        assert "Step 1 reads <bos> and produces" in page.locator("body").inner_text()
        page.get_by_role("slider").first.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function("() => document.body.innerText.includes('Step 2 reads <bos>')", timeout=60_000)
        wait_for_app(page, charts=4)
        page.get_by_role("radio", name="Last layer").click()
        page.wait_for_selector("[role='radio'][aria-checked='true']:has-text('Last layer')", timeout=30_000)
        wait_for_app(page, charts=4)
        assert "Logit lens" in page.locator("body").inner_text()
        assert_no_errors(page)
