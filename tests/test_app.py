"""The app's pages in Streamlit's AppTest: widgets in, figures and state out, never an exception."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.io.paths import ROOT

APP = str(ROOT / "app.py")


pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")


def run_app(page: str = "translate", **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if page != "translate":
        at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def spec(at: AppTest, index: int) -> dict:
    return json.loads(at.get("plotly_chart")[index].proto.spec)


def chips_html(at: AppTest) -> str:
    return " ".join(h.proto.body for h in at.get("html"))


def test_translate_page_shows_translation_candidates_and_attention():
    at = run_app()
    assert at.session_state["text"] == "I like to read books."
    assert "我喜欢" in chips_html(at)
    charts = [spec(at, i) for i in range(3)]
    assert charts[0]["data"][0]["type"] == "bar" and charts[0]["data"][0]["orientation"] == "h"
    cross = charts[1]
    assert cross["layout"]["xaxis"]["ticktext"] == ["i", "like", "to", "read", "books", ".", "<eos>"]
    assert len(cross["data"][0]["y"]) == 7 and abs(sum(cross["data"][0]["y"]) - 1) < 1e-4


def test_typing_a_sentence_and_moving_the_step_control():
    at = run_app()
    at.text_area(key="text").input("Tom is taller than Mary.").run()
    assert not at.exception
    assert at.get("plotly_chart")[1].proto.spec and "汤姆比玛丽高" in chips_html(at)
    at.slider(key="step").set_value(3).run()
    topk = spec(at, 0)
    assert "比" in topk["layout"]["title"]["text"]
    self_attention = spec(at, 2)
    assert self_attention["layout"]["xaxis"]["ticktext"] == ["<bos>", "汤", "姆"]
    next_button = [b for b in at.button if b.label == "Next"][0]
    next_button.click().run()
    assert at.session_state["step"] == 4 and not at.exception


def test_layer_and_head_choice_changes_the_cross_attention():
    at = run_app(text="Where is the train station?")
    mean = spec(at, 1)["data"][0]["y"]
    at.selectbox(key="head").set_value("2").run()
    at.selectbox(key="layer").set_value("1").run()
    assert "layer 1 · head 2" in spec(at, 1)["layout"]["title"]["text"]
    assert spec(at, 1)["data"][0]["y"] != mean


def test_branching_forces_another_token_and_shows_both_translations():
    at = run_app(text="Tom is taller than Mary.")
    pills = at.get_by_key("branch_0")
    alternative = pills.options[0] if hasattr(pills, "options") else None
    assert alternative
    pills.set_value(alternative).run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert any(c.startswith(f"Branch: “{alternative}” at step 1") for c in captions)
    assert "Original (greedy)" in captions


def test_beam_search_is_shown_next_to_greedy():
    at = run_app()
    at.sidebar.slider(key="beam").set_value(4).run()
    assert any("Beam search, 4 beams" in c.value for c in at.caption) and not at.exception


def test_deep_link_reproduces_the_view():
    at = run_app(text="Tom is taller than Mary.", step="3", layer="2", head="3")
    assert at.session_state["text"] == "Tom is taller than Mary." and at.session_state["step"] == 3
    assert "layer 2 · head 3" in spec(at, 1)["layout"]["title"]["text"]
    assert "比" in spec(at, 0)["layout"]["title"]["text"]
    at = run_app("attention", text="My brother is a doctor.", kind="encoder self-attention")
    heatmap = spec(at, 0)
    assert heatmap["data"][0]["type"] == "heatmap" and heatmap["layout"]["title"]["text"].startswith(
        "encoder self-attention"
    )
    assert heatmap["layout"]["xaxis"]["ticktext"][:3] == ["my", "brother", "is"]


@pytest.mark.parametrize("kind", ["encoder self-attention", "decoder masked self-attention", "cross-attention"])
def test_attention_page_heatmap_has_token_axes_of_the_right_shape(kind):
    at = run_app("attention", text="Tom is taller than Mary.")
    at.get("button_group")[0].set_value(kind).run()
    heatmap = spec(at, 0)
    source = ["tom", "is", "taller", "than", "mary", ".", "<eos>"]
    decoder = ["<bos>", "汤", "姆", "比", "玛", "丽", "高", "。"]
    rows, cols = {
        "encoder self-attention": (source, source),
        "decoder masked self-attention": (decoder, decoder),
        "cross-attention": (decoder, source),
    }[kind]
    assert heatmap["layout"]["yaxis"]["ticktext"] == rows and heatmap["layout"]["xaxis"]["ticktext"] == cols
    z = heatmap["data"][0]["z"]
    assert len(z) == len(rows) and len(z[0]) == len(cols)
    grid = spec(at, 1)
    assert len([t for t in grid["data"] if t["type"] == "heatmap"]) == 3 * 4
    assert len(spec(at, 2)["data"]) == 3


def test_grouping_characters_into_jieba_words():
    at = run_app("attention", text="Tom is taller than Mary.")
    at.toggle(key="group_words").set_value(True).run()
    heatmap = spec(at, 0)
    assert heatmap["layout"]["yaxis"]["ticktext"] == ["<bos>", "汤姆", "比", "玛丽", "高", "。"]
    for row in heatmap["data"][0]["z"]:
        assert abs(sum(row) - 1) < 1e-4  # columns summed over a word keep each row a distribution


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
    at = run_app()
    at.text_area(key="text").input(text).run()
    assert not at.exception
    if not text.strip():
        assert at.info and "nothing to translate" in at.info[0].value
    if "<script>" in text:
        html = chips_html(at)
        assert "<script>" not in html and "<b>" not in html and "&lt;unk&gt;" in html  # "<" is an unknown token
    if text.startswith("x "):
        assert any("only the first" in w.value for w in at.warning)
    if text.startswith("你好"):
        assert any("Chinese characters" in w.value for w in at.warning)


def test_large_type_toggle_enlarges_figure_fonts():
    at = run_app()
    at.sidebar.toggle(key="large_type").set_value(True).run()
    assert spec(at, 0)["layout"]["font"]["size"] == 20 and not at.exception
