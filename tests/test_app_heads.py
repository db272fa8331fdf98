"""The Heads page in AppTest: switching heads off re-translates live (here and on the other pages),
keep-only, deep links, two sessions apart, the shipped atlas keyed by the file's hash, and an atlas
computed on demand for an upload."""

import pytest

from core.explain.atlas_view import shipped_atlas
from core.inference.trace import trace
from core.io.checkpoint import load_checkpoint, save_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT, GRU_CHECKPOINT
from core.model.intervention import Intervention, parse_heads
from tests.helpers.apptest import chart, html_text, open_app

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")
SENTENCE = "Tom is taller than Mary."
CROSS_3 = "cross:3:1,cross:3:2,cross:3:3,cross:3:4"


@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(DEFAULT_CHECKPOINT)


def translation_with(loaded, spec: str) -> str:
    return trace(
        loaded.model, loaded.pipeline, SENTENCE, intervention=Intervention(ablated_heads=parse_heads(spec))
    ).translation


def test_switching_heads_off_retranslates_and_the_other_pages_follow(shipped):
    at = open_app("heads", text=SENTENCE)
    assert len(at.get("button_group")) == 9 + 1  # 3 kinds × 3 layers of head pills, and the kind selector
    at.get_by_key("heads_cross_2").set_value([1, 2, 3, 4]).run()
    assert not at.exception and at.session_state["ablate"] == CROSS_3 and at.query_params["ablate"] == CROSS_3
    ablated = translation_with(shipped, CROSS_3)
    assert ablated != translation_with(shipped, "") and "4 of 36 heads switched off" in [h.value for h in at.subheader]
    assert "background:#fde68a" in html_text(at)  # changed characters are marked
    at.selectbox(key="heads_head").set_value("4").run()  # layer 3 is the default: a head that is off
    assert "switched off" in chart(at, "heads_heatmap")["layout"]["title"]["text"]
    at.switch_page("pages/translate.py").run()
    assert not at.exception and f">{ablated}<" in html_text(at)
    assert any(CROSS_3.replace(",", ", ") in w.value for w in at.sidebar.warning)
    at.sidebar.button(key="heads_all_on").click().run()
    assert at.session_state["ablate"] == "" and f">{translation_with(shipped, '')}<" in html_text(at)


def test_keep_only_switches_off_every_other_head_of_that_kind():
    at = open_app("heads", text=SENTENCE)
    at.radio(key="heads_mode").set_value("Keep only the chosen heads").run()
    at.get_by_key("heads_cross_2").set_value([4]).run()
    off = parse_heads(at.session_state["ablate"])
    assert len(off) == 11 and all(h.kind == "cross" for h in off) and parse_heads("cross:3:4").isdisjoint(off)


def test_a_link_carries_the_ablation_and_a_bad_one_is_dropped_with_a_message(shipped):
    at = open_app("heads", text=SENTENCE, ablate="cross:3:4,enc:1:2")
    assert at.get_by_key("heads_cross_2").value == [4] and at.get_by_key("heads_encoder_0").value == [2]
    at = open_app(text=SENTENCE, ablate="cross:9:1")  # a link made for a bigger model
    assert not at.exception and any("layer 9 does not exist" in w.value for w in at.warning)
    assert at.session_state["ablate"] == ""


def test_two_sessions_switch_off_different_heads():
    first, second = open_app("heads", text=SENTENCE), open_app("heads", text=SENTENCE)
    first.get_by_key("heads_cross_2").set_value([1, 2, 3, 4]).run()
    second.get_by_key("heads_encoder_0").set_value([1]).run()
    first.run()
    assert first.session_state["ablate"] == CROSS_3 and second.session_state["ablate"] == "enc:1:1"


def test_the_atlas_grid_and_pruning_curve_for_the_shipped_model(shipped):
    at = open_app("heads", text=SENTENCE)
    grid = chart(at, "atlas_grid")
    cells = [trace for trace in grid["data"] if trace["type"] == "scatter"]
    assert [len(t["customdata"]) for t in cells] == [12, 12, 12] and cells[2]["customdata"][-1] == ["cross", 3, 4]
    assert "switched off: BLEU" in cells[0]["text"][0]
    curve = chart(at, "pruning_curve")
    assert curve["data"][0]["x"][:2] == [0, 1] and len(curve["data"][0]["x"]) == 37
    at.selectbox(key="atlas_measure").set_value("alignment error rate (AER, lower is better)").run()
    assert not at.exception and chart(at, "atlas_grid")["data"][0]["type"] == "heatmap"


def test_the_shipped_atlas_belongs_to_exactly_that_file(shipped, tmp_path):
    atlas = shipped_atlas(shipped.sha256)
    assert atlas["model"]["file"] == DEFAULT_CHECKPOINT.name and atlas["sentences"] == 500
    assert shipped_atlas(load_checkpoint(GRU_CHECKPOINT).sha256)["model"]["arch"] == "rnn"
    resaved = load_checkpoint(
        save_checkpoint(
            tmp_path / "same-weights.safetensors", shipped.model, shipped.pipeline, shipped.card, half=False
        )
    )
    assert resaved.sha256 != shipped.sha256 and shipped_atlas(resaved.sha256) is None  # other bytes: no atlas


@pytest.mark.slow
def test_an_atlas_is_computed_on_demand_for_an_upload(trained_tiny, tmp_path):
    model, pipeline = trained_tiny
    data = save_checkpoint(tmp_path / "tiny.safetensors", model, pipeline).read_bytes()
    at = open_app("models")
    at.file_uploader(key="upload_file").set_value(("tiny.safetensors", data, "application/octet-stream")).run()
    at.switch_page("pages/heads.py").run()
    assert not at.exception and any("No atlas" in i.value for i in at.info)
    at.button(key="compute_atlas").click().run()
    assert not at.exception
    grid = chart(at, "atlas_grid")
    assert sum(len(t["customdata"]) for t in grid["data"] if t["type"] == "scatter") == 3 * 2 * 4
