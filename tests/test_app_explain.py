"""The Explain page in AppTest: every method's map on the same axes, the step view following the
slider, the attention view choice, the ablation carried over, the GRU model, and empty input."""

import numpy as np
import pytest

from core.explain.attention_flow import AttentionChoice
from core.explain.attribution import METHODS, explain, row_normalised
from core.inference.trace import trace
from core.io.checkpoint import load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT
from core.model.intervention import Intervention, parse_heads
from pages.ui.session_models import SHIPPED_GRU
from tests.helpers.apptest import chart, chart_keys, open_app, shown, ticks

pytestmark = [pytest.mark.usefixtures("fresh_streamlit_caches"), pytest.mark.slow]
SENTENCE = "Tom is taller than Mary."


@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(DEFAULT_CHECKPOINT)


def heatmaps(figure: dict) -> list[dict]:
    return [t for t in figure["data"] if t["type"] == "heatmap"]


def test_every_method_is_drawn_on_the_same_axes_and_the_step_view_follows_the_slider(shipped):
    at = open_app("explain", text=SENTENCE)
    assert chart_keys(at) == ["explain_grid", "explain_step_bars", "explain_share", "explain_lens"]
    expected = trace(shipped.model, shipped.pipeline, SENTENCE)
    grid = chart(at, "explain_grid")
    assert [shown(a["text"]) for a in grid["layout"]["annotations"]] == list(METHODS.values())
    produced = [step.token for step in expected.steps]
    assert ticks(grid, "yaxis") == produced and ticks(grid, "xaxis") == expected.source.tokens
    # the raw attention map is the mean of every layer and head, each row scaled to 1
    np.testing.assert_allclose(
        heatmaps(grid)[0]["z"], row_normalised(expected.cross.numpy().mean(axis=(0, 1))), rtol=1e-5
    )
    at.select_slider(key="explain_step").set_value(f"3: {produced[2]}").run()
    assert not at.exception
    bars = {shown(t["name"]): t["y"] for t in chart(at, "explain_step_bars")["data"]}
    rollout = explain(shipped.model, expected, shipped.pipeline.tgt_vocab, "rollout")
    np.testing.assert_allclose(bars["Attention rollout"], row_normalised(rollout.source)[2], rtol=1e-6)
    lens = chart(at, "explain_lens")
    assert [shown(text) for text in lens["data"][0]["text"][-1]] == [token for token, _ in expected.steps[2].top_k]
    assert any(f"reads <bos> {' '.join(produced[:2])} and produces" in m.value.replace("\\", "") for m in at.markdown)


def test_the_attention_view_can_be_the_last_layer_or_the_atlas_alignment_head(shipped):
    at = open_app("explain", text=SENTENCE)
    views = at.get("button_group")[0].proto.options
    labels = [option.content for option in views]
    assert labels[:2] == ["Mean of layers and heads", "Last layer"] and labels[2].startswith("Alignment head cross:")
    expected = trace(shipped.model, shipped.pipeline, SENTENCE)
    at.session_state["explain_attention"] = "Last layer"
    at.run()
    np.testing.assert_allclose(
        heatmaps(chart(at, "explain_grid"))[0]["z"], row_normalised(expected.cross[-1].numpy().mean(0)), rtol=1e-5
    )


def test_the_page_explains_the_model_with_its_heads_switched_off(shipped):
    spec = "cross:3:1,cross:3:2"
    at = open_app("explain", text=SENTENCE, ablate=spec)
    assert not at.exception
    off = Intervention(ablated_heads=parse_heads(spec))
    ablated = trace(shipped.model, shipped.pipeline, SENTENCE, intervention=off)
    norm = explain(shipped.model, ablated, shipped.pipeline.tgt_vocab, "norm", off)
    np.testing.assert_allclose(heatmaps(chart(at, "explain_grid"))[1]["z"], row_normalised(norm.source), rtol=1e-5)
    raw = explain(shipped.model, ablated, shipped.pipeline.tgt_vocab, "attention", off, AttentionChoice())
    np.testing.assert_allclose(heatmaps(chart(at, "explain_grid"))[0]["z"], row_normalised(raw.source), rtol=1e-5)


def test_a_gru_model_gets_attention_and_gradients_and_is_told_what_does_not_apply():
    at = open_app("models", text=SENTENCE)
    at.radio(key="model").set_value(SHIPPED_GRU).run()
    at.switch_page("pages/explain.py").run()
    assert not at.exception
    grid = chart(at, "explain_grid")
    assert [shown(a["text"]) for a in grid["layout"]["annotations"]] == [
        "Raw cross-attention",
        "Gradient × input",
        "Integrated gradients",
    ]
    captions = " ".join(c.value for c in at.caption)
    assert "Norm-based attention" in captions and "Attention rollout" in captions and "GRU" in captions
    assert "explain_lens" not in chart_keys(at) and "no shared readout" in captions


def test_a_huge_input_is_cut_with_a_notice_and_explained():
    at = open_app("explain", timeout=120, text="the cat sat on the mat and " * 400)
    assert not at.exception and any("only the first" in w.value for w in at.warning)
    assert chart_keys(at) == ["explain_grid", "explain_step_bars", "explain_share", "explain_lens"]


def test_over_the_apps_limit_integrated_gradients_are_left_to_the_command_line(monkeypatch):
    monkeypatch.setattr("pages.ui.caches.APP_IG_LIMIT", 50)  # a short sentence is over it
    at = open_app("explain", text=SENTENCE)
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "Integrated gradients are computed here for translations up to 50" in captions
    titles = [shown(a["text"]) for a in chart(at, "explain_grid")["layout"]["annotations"]]
    assert titles[-1] == "Gradient × input" and "Integrated gradients" not in titles
    assert "explain_share" not in chart_keys(at)


def test_nothing_to_explain_says_so():
    at = open_app("explain", text="   ")
    assert not at.exception and at.info and "nothing to translate" in at.info[0].value
