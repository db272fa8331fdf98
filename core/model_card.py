"""Reading a checkpoint's card and writing an upload's intake report, without Streamlit.

A card comes from a file anyone may upload: every field is checked for type before use, and a
field that is missing or malformed is skipped, never trusted."""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from core.checkpoint import FORMAT_NAME, FORMAT_VERSION, LoadedModel
from core.decoding import translate

SMOKE_SENTENCE = "I like to read books."
HISTORY_COLUMNS = ("epoch", "train_loss", "dev_loss", "dev_bleu", "dev_chrf", "lr", "seconds")


def _number(value: Any) -> float | None:
    if isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(float(value)):
        return float(value)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else (None if _number(value) is None else f"{value:g}")


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def card_facts(card: dict[str, Any]) -> list[tuple[str, str]]:
    """The card's headline fields as (label, text) rows; fields that are absent are left out."""
    test = _get(card, "test") or {}
    rows = [
        ("Training command", _text(card.get("command"))),
        ("Data file", _text(_get(card, "data", "file"))),
        ("Data SHA-256", _text(_get(card, "data", "sha256"))),
        ("Sentence pairs read", _text(_get(card, "data", "pairs"))),
        ("Trained on", _text(card.get("date"))),
        ("Device", _text(card.get("device"))),
        ("Training minutes", _text(card.get("training_minutes"))),
        ("Best epoch (dev BLEU)", _text(card.get("best_epoch"))),
        ("Test BLEU", _text(_get(test, "bleu"))),
        ("Test chrF", _text(_get(test, "chrf"))),
        ("Test set", _test_set(test)),
    ]
    return [(label, value) for label, value in rows if value is not None]


def _test_set(test: Any) -> str | None:
    sentences, references = _number(_get(test, "sentences")), _number(_get(test, "references"))
    if sentences is None:
        return None
    refs = f", {references:.0f} references" if references is not None else ""
    return f"{sentences:.0f} English sentences{refs}, {_text(_get(test, 'decoding')) or 'greedy'} decoding"


def split_table(card: dict[str, Any]) -> pd.DataFrame | None:
    """Pairs and English sentences in train / dev / test, if the card has them."""
    rows = []
    for name in ("train", "dev", "test"):
        pairs = _number(_get(card, "split", name, "pairs"))
        english = _number(_get(card, "split", name, "english_sentences"))
        if pairs is not None:
            rows.append(
                {"split": name, "pairs": int(pairs), "English sentences": None if english is None else int(english)}
            )
    return pd.DataFrame(rows) if rows else None


def history_frame(card: dict[str, Any]) -> pd.DataFrame | None:
    """One row per epoch with the known numeric columns; None when the card has no usable history."""
    history = card.get("history")
    if not isinstance(history, list):
        return None
    rows = []
    for item in history:
        if isinstance(item, dict) and _number(item.get("epoch")) is not None:
            rows.append({column: _number(item.get(column)) for column in HISTORY_COLUMNS})
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


def attention_snapshots(card: dict[str, Any]) -> list[tuple[int, list[ProbeMap]]]:
    """(epoch, probe maps) in epoch order; malformed entries are dropped."""
    probes = _get(card, "attention_snapshots", "probes")
    epochs = _get(card, "attention_snapshots", "epochs")
    if not isinstance(probes, list) or not isinstance(epochs, list):
        return []
    out = []
    for entry in epochs:
        epoch = _number(_get(entry, "epoch"))
        items = _get(entry, "probes")
        if epoch is None or not isinstance(items, list):
            continue
        maps = [m for m in (_probe_map(s, item) for s, item in zip(probes, items)) if m is not None]
        if maps:
            out.append((int(epoch), maps))
    return sorted(out, key=lambda pair: pair[0])


def _probe_map(sentence: Any, item: Any) -> ProbeMap | None:
    sources, decoders, cross = _get(item, "source_tokens"), _get(item, "decoder_tokens"), _get(item, "cross")
    if not (isinstance(sentence, str) and _strings(sources) and _strings(decoders) and isinstance(cross, list)):
        return None
    try:
        matrix = np.array(cross, dtype=float)
    except (TypeError, ValueError):
        return None
    if matrix.shape != (len(decoders), len(sources)) or not np.isfinite(matrix).all():
        return None
    return ProbeMap(sentence, sources, decoders, matrix)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value)


def config_rows(loaded: LoadedModel) -> list[tuple[str, str]]:
    c = loaded.config
    return [
        ("Architecture", c.arch),
        ("d_model", str(c.d_model)),
        ("Attention heads", f"{c.n_heads} (d_k = {c.head_dim})"),
        ("Layers (encoder + decoder)", f"{c.n_enc_layers} + {c.n_dec_layers}"),
        ("Feed-forward width", str(c.d_ff)),
        ("Layer norm", "pre-LN" if c.norm_first else "post-LN (as in the paper)"),
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
        card=card_facts(loaded.card),
    )
