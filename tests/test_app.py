"""The app's pages in Streamlit's AppTest: widgets in, figures and state out, never an exception."""

import pytest

from core.inference.trace import trace
from pages.ui.display import md_literal
from pages.ui.session_models import shipped_model
from tests.helpers.apptest import chart, html_text, open_app, ticks

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")


def test_translate_page_shows_translation_candidates_and_attention():
    at = open_app()
    assert at.session_state["text"] == "I like to read books."
    assert "我喜欢" in html_text(at)
    topk = chart(at, "topk_chart")
    assert topk["data"][0]["type"] == "bar" and topk["data"][0]["orientation"] == "h"
    assert ticks(chart(at, "self_chart"), "xaxis") == ["<bos>"]
    cross = chart(at, "cross_chart")
    assert ticks(cross, "xaxis") == ["i", "like", "to", "read", "books", ".", "<eos>"]
    assert len(cross["data"][0]["y"]) == 7 and abs(sum(cross["data"][0]["y"]) - 1) < 1e-4


def test_typing_a_sentence_and_moving_the_step_control():
    at = open_app()
    at.text_area(key="text").input("Tom is taller than Mary.").run()
    assert not at.exception
    assert chart(at, "cross_chart") and "汤姆比玛丽高" in html_text(at)
    at.slider(key="step").set_value(3).run()
    topk = chart(at, "topk_chart")
    assert "比" in topk["layout"]["title"]["text"]
    self_attention = chart(at, "self_chart")
    assert ticks(self_attention, "xaxis") == ["<bos>", "汤", "姆"]
    next_button = [b for b in at.button if b.label == "Next"][0]
    next_button.click().run()
    assert at.session_state["step"] == 4 and not at.exception


def test_layer_and_head_choice_changes_the_cross_attention():
    at = open_app(text="Where is the train station?")
    mean = chart(at, "cross_chart")["data"][0]["y"]
    at.selectbox(key="head").set_value("2").run()
    at.selectbox(key="layer").set_value("1").run()
    assert "layer 1 · head 2" in chart(at, "cross_chart")["layout"]["title"]["text"]
    assert chart(at, "cross_chart")["data"][0]["y"] != mean


def test_branching_forces_another_token_and_shows_both_translations():
    at = open_app(text="Tom is taller than Mary.")
    shipped = shipped_model()
    first = trace(shipped.model, shipped.pipeline, "Tom is taller than Mary.").steps[0]
    expected = [token for token, _ in first.top_k if token != first.token]
    pills = at.get_by_key("branch_0")
    assert pills.options == [md_literal(t) for t in expected]  # the other candidates of step 1, in order
    alternative = expected[0]
    pills.set_value(alternative).run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert any(c.startswith(f"Branch: “{alternative}” at step 1") for c in captions)
    assert "Original (greedy)" in captions


def test_beam_search_is_shown_next_to_greedy():
    at = open_app()
    at.sidebar.slider(key="beam").set_value(4).run()
    assert any("Beam search, 4 beams" in c.value for c in at.caption) and not at.exception


def test_deep_link_reproduces_the_view():
    at = open_app(text="Tom is taller than Mary.", step="3", layer="2", head="3")
    assert at.session_state["text"] == "Tom is taller than Mary." and at.session_state["step"] == 3
    assert "layer 2 · head 3" in chart(at, "cross_chart")["layout"]["title"]["text"]
    assert "比" in chart(at, "topk_chart")["layout"]["title"]["text"]
    at = open_app("attention", text="My brother is a doctor.", kind="encoder self-attention")
    heatmap = chart(at, "main_heatmap")
    assert heatmap["data"][0]["type"] == "heatmap" and heatmap["layout"]["title"]["text"].startswith(
        "encoder self-attention"
    )
    assert ticks(heatmap, "xaxis")[:3] == ["my", "brother", "is"]


@pytest.mark.parametrize("kind", ["encoder self-attention", "decoder masked self-attention", "cross-attention"])
def test_attention_page_heatmap_has_token_axes_of_the_right_shape(kind):
    at = open_app("attention", text="Tom is taller than Mary.")
    at.get("button_group")[0].set_value(kind).run()
    heatmap = chart(at, "main_heatmap")
    source = ["tom", "is", "taller", "than", "mary", ".", "<eos>"]
    decoder = ["<bos>", "汤", "姆", "比", "玛", "丽", "高", "。"]
    rows, cols = {
        "encoder self-attention": (source, source),
        "decoder masked self-attention": (decoder, decoder),
        "cross-attention": (decoder, source),
    }[kind]
    assert ticks(heatmap, "yaxis") == rows and ticks(heatmap, "xaxis") == cols
    z = heatmap["data"][0]["z"]
    assert len(z) == len(rows) and len(z[0]) == len(cols)
    grid = chart(at, "heads_grid")
    assert len([t for t in grid["data"] if t["type"] == "heatmap"]) == 3 * 4
    assert len(chart(at, "layer_means")["data"]) == 3


def test_grouping_characters_into_jieba_words():
    at = open_app("attention", text="Tom is taller than Mary.")
    at.toggle(key="group_words").set_value(True).run()
    heatmap = chart(at, "main_heatmap")
    assert ticks(heatmap, "yaxis") == ["<bos>", "汤姆", "比", "玛丽", "高", "。"]
    for row in heatmap["data"][0]["z"]:
        assert abs(sum(row) - 1) < 1e-4  # columns summed over a word keep each row a distribution


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "🙂🎉",
        "你好，世界",
        "<script>alert('x')</script><b>bold</b>",
        "?!...",
        "x " * 2400,
        "\u202eevil\u200b",
        "12 345 https://example.com",
    ],
)
def test_bad_input_gives_a_message_or_a_result_never_an_exception(text):
    """(slow: nine page runs; the reliability suite sends many more hostile texts through this page)"""
    at = open_app()
    at.text_area(key="text").input(text).run()
    assert not at.exception
    if not text.strip():
        assert at.info and "nothing to translate" in at.info[0].value
    if "<script>" in text:
        html = html_text(at)
        assert "<script>" not in html and "<b>" not in html and "&lt;unk&gt;" in html  # "<" is an unknown token
    if text.startswith("x "):
        assert any("only the first" in w.value for w in at.warning)
    if text.startswith("你好"):
        assert any("Chinese characters" in w.value for w in at.warning)


def test_large_type_toggle_enlarges_figure_fonts():
    at = open_app()
    at.sidebar.toggle(key="large_type").set_value(True).run()
    assert chart(at, "topk_chart")["layout"]["font"]["size"] == 20 and not at.exception
