"""Reading a checkpoint's card for people, and an upload's intake report, without Streamlit.

A card comes from a file anyone may upload: core.io.card.ModelCard.from_json has already kept only
the fields of the schema's types; what is missing is skipped here, never guessed."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.inference.batch import translate
from core.io.card import HeldOutScores, ModelCard, ProbeSnapshot
from core.io.checkpoint import FORMAT_NAME, FORMAT_VERSION, LoadedModel
from core.model.registry import spec_for

SMOKE_SENTENCE = "I like to read books."
HISTORY_COLUMNS = ("epoch", "train_loss", "dev_loss", "dev_bleu", "dev_chrf", "lr", "seconds")


def number_text(value: float | None) -> str | None:
    return None if value is None else f"{value:g}"


def card_facts(card: ModelCard) -> list[tuple[str, str]]:
    """(label, value) rows of what the card says, in reading order; missing facts are left out."""
    data, test = card.data, card.test
    rows = [
        ("Training command", card.command),
        ("Data file", data and data.file),
        ("Data SHA-256", data and data.sha256),
        ("Sentence pairs read", number_text(data and data.pairs)),
        ("Trained on", card.date),
        ("Device", card.device),
        ("Training minutes", number_text(card.training_minutes)),
        ("Best epoch (dev BLEU)", number_text(card.best_epoch)),
        ("Test BLEU", number_text(test and test.bleu)),
        ("Test chrF", number_text(test and test.chrf)),
        ("Test set", _test_set(test)),
    ]
    return [(label, value) for label, value in rows if value is not None]


def _test_set(test: HeldOutScores | None) -> str | None:
    if test is None or test.sentences is None:
        return None
    refs = f", {test.references} references" if test.references is not None else ""
    return f"{test.sentences} English sentences{refs}, {test.decoding or 'greedy'} decoding"


def split_table(card: ModelCard) -> pd.DataFrame | None:
    """Pairs and English sentences in train / dev / test, if the card has them."""
    rows = []
    for name in ("train", "dev", "test"):
        size = getattr(card.split, name) if card.split else None
        if size is not None and size.pairs is not None:
            rows.append({"split": name, "pairs": size.pairs, "English sentences": size.english_sentences})
    return pd.DataFrame(rows) if rows else None


def history_frame(card: ModelCard) -> pd.DataFrame | None:
    """One row per epoch with the known numeric columns; None when the card has no usable history."""
    rows = [[getattr(row, column) for column in HISTORY_COLUMNS] for row in card.history if row.epoch is not None]
    if not rows:
        return None
    frame = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS), dtype=float)  # missing values are NaN
    frame["epoch"] = frame["epoch"].astype(int)
    return frame.sort_values("epoch", ignore_index=True)


@dataclass
class ProbeMap:
    sentence: str
    source_tokens: list[str]
    decoder_tokens: list[str]
    cross: np.ndarray  # (decoder tokens, source tokens), mean over layers and heads


def attention_snapshots(card: ModelCard) -> list[tuple[int, list[ProbeMap]]]:
    """(epoch, probe maps) in epoch order; malformed entries are dropped."""
    snapshots = card.attention_snapshots
    if snapshots is None or snapshots.probes is None:
        return []
    out = []
    for entry in snapshots.epochs:
        maps = [m for m in (_probe_map(s, item) for s, item in zip(snapshots.probes, entry.probes)) if m is not None]
        if entry.epoch is not None and maps:
            out.append((entry.epoch, maps))
    return sorted(out, key=lambda pair: pair[0])


def _probe_map(sentence: str, item: ProbeSnapshot) -> ProbeMap | None:
    sources, decoders = item.source_tokens, item.decoder_tokens
    if not sources or not decoders or item.cross is None:
        return None
    try:
        matrix = np.array(item.cross, dtype=float)
    except ValueError:  # ragged rows
        return None
    if matrix.shape != (len(decoders), len(sources)):
        return None
    return ProbeMap(sentence, sources, decoders, matrix)


def scores_line(card: ModelCard) -> str | None:
    """'Test BLEU … · chrF …' from a card, or None."""
    test = card.test
    if test is None or test.bleu is None:
        return None
    sentences = number_text(test.sentences) or "?"
    return f"Test BLEU {test.bleu:g} · chrF {number_text(test.chrf) or '?'} (greedy, {sentences} sentences)."


def summary(loaded: LoadedModel) -> str:
    """One line on what the model is."""
    spec = spec_for(loaded.config.arch)
    return (
        f"{spec.title}, {spec.describe(loaded.config)}, {loaded.parameter_count:,} parameters, "
        f"target units: {loaded.pipeline.zh_tokenizer}."
    )


def config_rows(loaded: LoadedModel) -> list[tuple[str, str]]:
    c = loaded.config
    spec = spec_for(c.arch)
    return [
        ("Architecture", spec.title),
        *spec.shape_rows(c),
        ("Vocabulary (English / Chinese)", f"{c.src_vocab_size:,} / {c.tgt_vocab_size:,}"),
        ("Chinese target units", loaded.pipeline.zh_tokenizer),
        ("Longest sequence", str(c.max_len)),
        ("Parameters", f"{loaded.parameter_count:,}"),
    ]


@dataclass
class IntakeReport:
    file_name: str
    size_bytes: int
    sha256: str
    format: str
    config: list[tuple[str, str]]
    tensors: pd.DataFrame  # name, shape, dtype as stored in the file
    tensor_check: str
    smoke_translation: str
    smoke_ms: float
    card: list[tuple[str, str]]


def intake_report(loaded: LoadedModel, file_name: str, data: bytes) -> IntakeReport:
    """What a person wants to know about a checkpoint they just uploaded (it loaded: it is valid)."""
    started = time.perf_counter()
    smoke = translate(loaded.model, loaded.pipeline, [SMOKE_SENTENCE])[0].text
    smoke_ms = (time.perf_counter() - started) * 1000
    fmt = json.loads(loaded.metadata.get("format", "{}"))
    stored = loaded.stored_tensors
    dtypes = sorted({dtype for _, _, dtype in stored})
    tensors = pd.DataFrame(
        [{"tensor": name, "shape": " × ".join(map(str, shape)), "stored as": dtype} for name, shape, dtype in stored]
    )
    return IntakeReport(
        file_name=file_name,
        size_bytes=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        format=f"{fmt.get('name', FORMAT_NAME)} version {fmt.get('version', FORMAT_VERSION)}",
        config=config_rows(loaded),
        tensors=tensors,
        tensor_check=f"{len(stored)} tensors, names and shapes match the config exactly; all finite; stored as {', '.join(dtypes)}.",
        smoke_translation=smoke,
        smoke_ms=smoke_ms,
        card=card_facts(loaded.model_card),
    )
