"""Cards and intake reports: real cards read fully, hostile or malformed cards never break the page."""

import numpy as np
import pytest

from core.explain import model_card
from core.io.card import ModelCard
from core.io.checkpoint import CheckpointError, load_checkpoint


def test_a_card_written_by_core_train_is_read_fully(trained_checkpoint):
    loaded = load_checkpoint(trained_checkpoint)
    card = loaded.model_card
    facts = dict(model_card.card_facts(card))
    assert facts["Training command"].startswith("python -m core.train --data") and len(facts["Data SHA-256"]) == 64
    assert {"Test BLEU", "Test chrF", "Best epoch (dev BLEU)"} <= set(facts)
    splits = model_card.split_table(card)
    assert splits["split"].tolist() == ["train", "dev", "test"] and splits["English sentences"].tolist()[1:] == [4, 4]
    history = model_card.history_frame(card)
    assert history["epoch"].tolist() == [1, 2, 3] and history["train_loss"].notna().all()
    snapshots = model_card.attention_snapshots(card)
    assert [epoch for epoch, _ in snapshots] == [1, 2, 3]
    probe = snapshots[-1][1][0]
    assert probe.cross.shape == (len(probe.decoder_tokens), len(probe.source_tokens))


def test_the_card_schema_reads_back_what_the_trainer_wrote(trained_checkpoint):
    """One schema for writer and reader: the stored card, read and written again, is unchanged."""
    loaded = load_checkpoint(trained_checkpoint)
    assert loaded.model_card.to_json() == loaded.card
    assert ModelCard.from_json(loaded.model_card.to_json()) == loaded.model_card
    assert ModelCard.from_json("not a card") == ModelCard() and ModelCard.from_json(None).to_json() == {
        "model_config": {},
        "train_config": {},
        "history": [],
    }


def test_intake_report_describes_the_upload(trained_checkpoint):
    data = trained_checkpoint.read_bytes()
    loaded = load_checkpoint(data)
    report = model_card.intake_report(loaded, "mine.safetensors", data)
    assert report.format == "translucent version 1" and report.size_bytes == len(data) and len(report.sha256) == 64
    assert dict(report.config)["d_model"] == "32" and dict(report.config)["Parameters"] == f"{loaded.parameter_count:,}"
    assert len(report.tensors) == len(loaded.model.state_dict()) and set(report.tensors["stored as"]) == {"float16"}
    assert report.tensor_check.startswith(f"{len(report.tensors)} tensors") and isinstance(
        report.smoke_translation, str
    )


@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"command": ["rm", "-rf"], "test": "high", "history": "lots", "attention_snapshots": 5},
        {"history": [None, {"epoch": "one"}, {"epoch": float("nan")}, {"epoch": 2, "train_loss": "x"}]},
        {"split": {"train": {"pairs": True}}, "data": {"sha256": {"a": 1}}},
        {
            "attention_snapshots": {
                "probes": ["a", 7],
                "epochs": [
                    {"epoch": 1, "probes": [{"source_tokens": ["a"], "decoder_tokens": ["b"], "cross": [[1, 2]]}]},
                    {"epoch": 2, "probes": [{"source_tokens": ["a"], "decoder_tokens": ["b"], "cross": [["x"]]}]},
                    {"epoch": 3, "probes": [{"source_tokens": [], "decoder_tokens": ["b"], "cross": []}]},
                    "garbage",
                ],
            }
        },
    ],
)
def test_malformed_cards_are_skipped_field_by_field(raw):
    card = ModelCard.from_json(raw)
    facts = model_card.card_facts(card)
    assert all(isinstance(label, str) and isinstance(value, str) for label, value in facts)
    assert "Training command" not in dict(facts)
    history = model_card.history_frame(card)
    assert history is None or history["epoch"].tolist() == [2] and np.isnan(history["train_loss"][0])
    assert model_card.split_table(card) is None
    assert model_card.attention_snapshots(card) == []


def test_the_app_can_refuse_a_model_too_big_for_memory(trained_checkpoint):
    with pytest.raises(CheckpointError, match="MiB of memory"):
        load_checkpoint(trained_checkpoint, max_model_bytes=1000)
