"""The Positions, Masks and Models pages in AppTest, including checkpoint uploads (good and bad)
and per-session models: one session's upload never reaches another session."""

import io
import json
import pickle
from pathlib import Path

import pytest
import safetensors.torch
import torch
from streamlit.testing.v1 import AppTest

from core.io.checkpoint import load_checkpoint, save_checkpoint
from pages.ui.display import md_literal
from pages.ui.session_models import MAX_SESSION_UPLOADS, SHIPPED, SHIPPED_GRU
from tests.helpers.apptest import chart, open_app, shown, sidebar_model, ticks

pytestmark = pytest.mark.usefixtures("fresh_streamlit_caches")


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="upload_file").set_value((name, data, "application/octet-stream")).run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def memorised_file(trained_tiny, tmp_path_factory) -> Path:
    """A tiny model that knows the synthetic sentences by heart; no card."""
    model, pipeline = trained_tiny
    return save_checkpoint(tmp_path_factory.mktemp("up") / "memorised.safetensors", model, pipeline)


def test_positions_page_shows_the_table_similarity_parts_and_ablation():
    at = open_app("positional", text="Tom is taller than Mary.")
    table = chart(at, "pe_table")
    assert len(table["data"][0]["z"]) == 60 and len(table["data"][0]["z"][0]) == 256
    assert len(chart(at, "pe_lines")["data"]) == 5
    similarity = chart(at, "pe_similarity")["data"][0]["z"]
    assert len(similarity) == 60 and abs(similarity[3][7] - similarity[10][14]) < 1e-3
    parts = chart(at, "pe_parts")
    assert ticks(parts, "yaxis") == ["tom", "is", "taller", "than", "mary", ".", "<eos>"]
    assert any("the same translation" in m.value for m in at.markdown)  # reversed words, no positions
    at.slider(key="pe_length").set_value(20).run()
    assert len(chart(at, "pe_table")["data"][0]["z"]) == 20
    at.radio(key="pe_ablation").set_value("shuffled").run()
    assert not at.exception
    captions = [c.value for c in at.caption]
    assert "With positions shuffled" in captions and "玛丽比汤姆高" in " ".join(h.proto.body for h in at.get("html"))


def test_masks_page_batches_two_sentences_and_runs_the_pipeline():
    at = open_app("masks", text="I like to read books.")
    batch = chart(at, "batch_source")
    assert shown(batch["data"][0]["text"][0][-1]) == "<pad>" and len(batch["data"][0]["text"]) == 2
    padding = chart(at, "mask_encoder")
    assert ticks(padding, "xaxis")[-1] == "<pad>" and padding["data"][0]["z"][0][-1] == 0
    causal = chart(at, "mask_causal")["data"][0]["z"]
    assert causal[0][1] == 0 and causal[1][0] == 1
    stages = chart(at, "score_stages")
    assert len(stages["data"]) == 4
    weights = stages["data"][3]["z"]
    assert all(abs(sum(row) - 1) < 1e-6 for row in weights[:3])
    comparison = chart(at, "fill_comparison")
    assert "max leak 0%" in comparison["layout"]["annotations"][0]["text"]
    assert "max leak 0%" not in comparison["layout"]["annotations"][1]["text"]
    at.get("button_group")[0].set_value("cross-attention").run()
    at.selectbox(key="mask_head").set_value("3").run()
    at.radio(key="mask_row").set_value(at.radio(key="mask_row").options[1]).run()
    assert not at.exception and "cross-attention, layer 3, head 3" in " ".join(c.value for c in at.caption)
    at.text_input(key="partner").input("   ").run()
    assert not at.exception


def test_models_page_shows_the_shipped_card_curves_and_attention_evolution():
    at = open_app("models")
    assert at.radio(key="model").value == SHIPPED and "Shipped Transformer" in sidebar_model(at)
    assert at.code[0].value.startswith("python -m core.train --data")
    curves = chart(at, "curves")
    assert {t["name"] for t in curves["data"]} == {"train loss", "dev loss", "dev BLEU", "dev chrF"}
    assert len(curves["data"][0]["x"]) == 12
    at.select_slider(key="snapshot_epoch").set_value(1).run()
    evolution = chart(at, "evolution")
    assert evolution["layout"]["title"]["text"].startswith("epoch 1:")
    assert ticks(evolution, "xaxis") == ["i", "like", "to", "read", "books", ".", "<eos>"]
    assert [c.value for c in at.caption if c.value.startswith("Shipped")] == [SHIPPED, SHIPPED_GRU]  # compared


def test_a_good_upload_becomes_this_sessions_model_on_every_page(memorised_file):
    at = open_app("models")
    upload(at, "memorised.safetensors", memorised_file.read_bytes())
    assert not at.error and at.success and "translucent version 1" in at.success[0].value
    label = at.radio(key="model").value
    assert label.startswith("memorised.safetensors · ") and label in sidebar_model(at)
    assert any("no training card" in w.value for w in at.warning)
    at.switch_page("pages/translate.py").run()
    at.text_area(key="text").input("Tom likes tea.").run()
    assert not at.exception and label in sidebar_model(at)
    assert "汤姆喜欢茶。" in " ".join(h.proto.body for h in at.get("html"))
    at.switch_page("pages/models.py").run()
    assert at.radio(key="model").value == label  # the choice survived the other page
    at.selectbox(key="compare_a").set_value(SHIPPED).run()
    captions = [c.value for c in at.caption]
    assert SHIPPED in captions and label in captions and not at.exception


def test_a_trained_upload_shows_its_card_and_pt_files_work(trained_checkpoint, tmp_path):
    loaded = load_checkpoint(trained_checkpoint)
    as_pt = save_checkpoint(tmp_path / "trained.pt", loaded.model, loaded.pipeline, loaded.card)
    at = open_app("models")
    upload(at, "trained.pt", as_pt.read_bytes())
    assert not at.error and at.radio(key="model").value.startswith("trained.pt · ")
    assert len(chart(at, "curves")["data"][0]["x"]) == 3
    assert at.code[0].value.startswith("python -m core.train")


def test_each_session_keeps_at_most_two_uploads(memorised_file, trained_checkpoint, tmp_path):
    at = open_app("models")
    loaded = load_checkpoint(memorised_file)
    files = [
        ("one.safetensors", memorised_file.read_bytes()),
        ("two.safetensors", trained_checkpoint.read_bytes()),
        ("three.pt", save_checkpoint(tmp_path / "three.pt", loaded.model, loaded.pipeline).read_bytes()),
    ]
    for name, data in files:
        upload(at, name, data)
    options = at.radio(key="model").options
    assert len(options) == 2 + MAX_SESSION_UPLOADS and not any(o.startswith("one.") for o in options)
    assert at.radio(key="model").value.startswith("three.pt")


class Payload:
    def __reduce__(self):
        return (exec, ("open('/tmp/translucent-pwned', 'w').write('x')",))


def bad_files(shipped_bytes: bytes) -> list[tuple[str, bytes, str]]:
    header_len = int.from_bytes(shipped_bytes[:8], "little")
    header = json.loads(shipped_bytes[8 : 8 + header_len])
    config = json.loads(header["__metadata__"]["model_config"])
    config.update(d_model=8192, n_heads=8, d_ff=65536, n_enc_layers=48, n_dec_layers=48, max_len=16384)
    metadata = dict(header["__metadata__"], model_config=json.dumps(config))
    huge = safetensors.torch.save({"x": torch.zeros(2)}, metadata=metadata)
    pickled = io.BytesIO()
    pickle.dump({"metadata": Payload(), "tensors": {}}, pickled)
    return [
        ("garbage.safetensors", b"this is not a checkpoint at all" * 10, "neither a .safetensors file"),
        ("notes.txt", b"hello", "not a checkpoint"),
        ("cut.safetensors", shipped_bytes[: len(shipped_bytes) // 2], "truncated"),
        ("evil.pt", pickled.getvalue(), "safe loader"),
        ("huge.safetensors", huge, "MiB of memory"),
        ("plain.safetensors", safetensors.torch.save({"w": torch.ones(3)}), "no Translucent metadata"),
        ("empty.safetensors", b"", "only 0 bytes"),
    ]


def test_bad_uploads_say_why_and_change_nothing(tmp_path):
    from core.io.paths import DEFAULT_CHECKPOINT

    at = open_app("models", text="Where is the train station?")
    for name, data, message in bad_files(DEFAULT_CHECKPOINT.read_bytes()):
        upload(at, name, data)
        shown = at.error[0].value if at.error else ""  # escaped markdown: shown literally
        assert md_literal(message) in shown and md_literal(name) in shown, (name, at.error)
        assert at.radio(key="model").value == SHIPPED and at.radio(key="model").options == [SHIPPED, SHIPPED_GRU]
    assert not Path("/tmp/translucent-pwned").exists()
    at.switch_page("pages/translate.py").run()
    assert at.session_state["text"] == "Where is the train station?" and "Shipped Transformer" in sidebar_model(at)


def test_an_upload_in_one_session_never_reaches_another(memorised_file):
    alice = open_app("models")
    bob = open_app("models")
    upload(alice, "alice.safetensors", memorised_file.read_bytes())
    assert alice.radio(key="model").value.startswith("alice.safetensors")
    bob.run()
    assert bob.radio(key="model").options == [SHIPPED, SHIPPED_GRU] and "Shipped Transformer" in sidebar_model(bob)
    bob.switch_page("pages/translate.py").run()
    assert "我喜欢" in " ".join(h.proto.body for h in bob.get("html"))  # the shipped model translates
    alice.switch_page("pages/translate.py").run()
    assert "alice.safetensors" in sidebar_model(alice)


@pytest.fixture(scope="module")
def gru_file(tmp_path_factory) -> Path:
    """A tiny, untrained GRU + Bahdanau checkpoint: enough to prove uploads of that kind work."""
    from core.model.config import ModelConfig
    from core.model.registry import build_model
    from core.text.pipeline import build_pipeline
    from tests.helpers.fixtures import synthetic_pairs

    torch.manual_seed(0)
    pipeline = build_pipeline(synthetic_pairs(), "char", min_freq=1)
    config = ModelConfig(len(pipeline.src_vocab), len(pipeline.tgt_vocab), d_model=16, n_heads=1, arch="rnn")
    path = tmp_path_factory.mktemp("gru") / "tiny-gru.safetensors"
    return save_checkpoint(path, build_model(config).eval(), pipeline)


def test_compare_page_sets_both_alignments_side_by_side_on_one_scale():
    at = open_app("compare", text="Tom is taller than Mary.")
    transformer, rnn = chart(at, "alignment_transformer"), chart(at, "alignment_rnn")
    source = ["tom", "is", "taller", "than", "mary", ".", "<eos>"]
    for figure in (transformer, rnn):
        assert ticks(figure, "xaxis") == source and figure["data"][0]["zmax"] == 1.0
        assert all(abs(sum(row) - 1) < 1e-4 for row in figure["data"][0]["z"])
    assert ticks(rnn, "yaxis")[0] == "<bos>" and "Bahdanau" in rnn["layout"]["title"]["text"]
    table = at.dataframe[0].value
    assert list(table.index) == [
        "architecture", "parameters", "training time", "test BLEU", "test chrF", "greedy decoding, this sentence"
    ]  # fmt: skip
    assert table.iloc[0].tolist() == ["Transformer", "GRU + Bahdanau attention"]
    at.selectbox(key="head").set_value("2").run()
    assert "head 2" in chart(at, "alignment_transformer")["layout"]["title"]["text"] and not at.exception


def test_a_gru_upload_works_and_pages_say_what_does_not_apply(gru_file):
    at = open_app("models")
    upload(at, "tiny-gru.safetensors", gru_file.read_bytes())
    assert not at.error and "GRU + Bahdanau attention" in sidebar_model(at)
    at.switch_page("pages/attention.py").run()
    assert not at.exception and at.info and "one attention" in at.info[0].value
    assert at.get("button_group")[0].proto.options[0].content == "cross-attention"
    for page in ("positional", "masks"):
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception and "GRU" in at.info[-1].value
    at.switch_page("pages/translate.py").run()
    assert not at.exception and any("no self-attention" in c.value for c in at.caption)


def test_sessions_uploading_one_file_share_one_model_in_memory(memorised_file):
    from pages.ui.session_models import upload_store

    alice, bob = open_app("models"), open_app("models")
    for at in (alice, bob):
        upload(at, "same.safetensors", memorised_file.read_bytes())
        assert "same.safetensors" in sidebar_model(at)
    assert len(upload_store()) == 1


def test_an_evicted_upload_says_so_and_the_session_falls_back_to_the_shipped_model(memorised_file, trained_checkpoint):
    from core.io.model_store import model_bytes
    from pages.ui.session_models import upload_store

    alice, bob = open_app("models", text="Tom likes tea."), open_app("models")
    upload(alice, "alice.safetensors", memorised_file.read_bytes())
    store = upload_store()
    store.budget_bytes = model_bytes(load_checkpoint(memorised_file)) + 1  # room for one of these models
    upload(bob, "bob.safetensors", trained_checkpoint.read_bytes())  # alice's model goes
    assert len(store) == 1 and "bob.safetensors" in sidebar_model(bob)
    alice.switch_page("pages/translate.py").run()
    assert not alice.exception
    assert any("was removed from the server's memory" in w.value and "alice" in w.value for w in alice.warning)
    assert "Shipped Transformer" in sidebar_model(alice) and alice.session_state["text"] == "Tom likes tea."
    alice.run()
    assert not any("removed from the server" in w.value for w in alice.warning)  # said once
