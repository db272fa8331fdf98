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

from core.architectures import ARCH_NAMES
from core.checkpoint import FORMAT_NAME, FORMAT_VERSION, LoadedModel
from core.decoding import translate

SMOKE_SENTENCE = "I like to read books."
HISTORY_COLUMNS = ("epoch", "train_loss", "dev_loss", "dev_bleu", "dev_chrf", "lr", "seconds")


def _number(value: Any) -> float | None:
    if isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(float(value)):
        return float(value)
    return None


def as_text(value: Any) -> str | None:
    return value if isinstance(value, str) else (None if _number(value) is None else f"{value:g}")


def get_path(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def card_facts(card: dict[str, Any]) -> list[tuple[str, str]]:
    """The card's headline fields as (label, text) rows; fields that are absent are left out."""
    test = get_path(card, "test") or {}
    rows = [
        ("Training command", as_text(card.get("command"))),
        ("Data file", as_text(get_path(card, "data", "file"))),
        ("Data SHA-256", as_text(get_path(card, "data", "sha256"))),
        ("Sentence pairs read", as_text(get_path(card, "data", "pairs"))),
        ("Trained on", as_text(card.get("date"))),
        ("Device", as_text(card.get("device"))),
        ("Training minutes", as_text(card.get("training_minutes"))),
        ("Best epoch (dev BLEU)", as_text(card.get("best_epoch"))),
        ("Test BLEU", as_text(get_path(test, "bleu"))),
        ("Test chrF", as_text(get_path(test, "chrf"))),
        ("Test set", _test_set(test)),
    ]
    return [(label, value) for label, value in rows if value is not None]


def _test_set(test: Any) -> str | None:
    sentences, references = _number(get_path(test, "sentences")), _number(get_path(test, "references"))
    if sentences is None:
        return None
    refs = f", {references:.0f} references" if references is not None else ""
    return f"{sentences:.0f} English sentences{refs}, {as_text(get_path(test, 'decoding')) or 'greedy'} decoding"


def split_table(card: dict[str, Any]) -> pd.DataFrame | None:
    """Pairs and English sentences in train / dev / test, if the card has them."""
    rows = []
    for name in ("train", "dev", "test"):
        pairs = _number(get_path(card, "split", name, "pairs"))
        english = _number(get_path(card, "split", name, "english_sentences"))
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
    probes = get_path(card, "attention_snapshots", "probes")
    epochs = get_path(card, "attention_snapshots", "epochs")
    if not isinstance(probes, list) or not isinstance(epochs, list):
        return []
    out = []
    for entry in epochs:
        epoch = _number(get_path(entry, "epoch"))
        items = get_path(entry, "probes")
        if epoch is None or not isinstance(items, list):
            continue
        maps = [m for m in (_probe_map(s, item) for s, item in zip(probes, items)) if m is not None]
        if maps:
            out.append((int(epoch), maps))
    return sorted(out, key=lambda pair: pair[0])


def _probe_map(sentence: Any, item: Any) -> ProbeMap | None:
    sources, decoders, cross = (
        get_path(item, "source_tokens"),
        get_path(item, "decoder_tokens"),
        get_path(item, "cross"),
    )
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


def test_scores(card: dict[str, Any]) -> str | None:
    """'Test BLEU … · chrF …' from a card, or None."""
    bleu, chrf = as_text(get_path(card, "test", "bleu")), as_text(get_path(card, "test", "chrf"))
    if bleu is None:
        return None
    sentences = as_text(get_path(card, "test", "sentences")) or "?"
    return f"Test BLEU {bleu} · chrF {chrf or '?'} (greedy, {sentences} sentences)."


def summary(loaded: LoadedModel) -> str:
    """One line on what the model is."""
    c = loaded.config
    shape = (
        f"d_model {c.d_model}, {c.n_heads} heads, {c.n_enc_layers}+{c.n_dec_layers} layers"
        if c.arch == "transformer"
        else f"width {c.d_model}, {c.n_enc_layers}+{c.n_dec_layers} GRU layers"
    )
    return (
        f"{ARCH_NAMES[c.arch]}, {shape}, {loaded.parameter_count:,} parameters, "
        f"target units: {loaded.pipeline.zh_tokenizer}."
    )


def config_rows(loaded: LoadedModel) -> list[tuple[str, str]]:
    c = loaded.config
    if c.arch == "transformer":
        shape = [
            ("d_model", str(c.d_model)),
            ("Attention heads", f"{c.n_heads} (d_k = {c.head_dim})"),
            ("Layers (encoder + decoder)", f"{c.n_enc_layers} + {c.n_dec_layers}"),
            ("Feed-forward width", str(c.d_ff)),
            ("Layer norm", "pre-LN" if c.norm_first else "post-LN (as in the paper)"),
        ]
    else:
        shape = [
            ("Width (embedding, GRU state)", f"{c.d_model} (encoder: {c.d_model // 2} per direction)"),
            ("GRU layers (encoder + decoder)", f"{c.n_enc_layers} + {c.n_dec_layers}"),
            ("Attention", "additive (Bahdanau): vᵀ tanh(W_s s + W_h h)"),
        ]
    return [
        ("Architecture", ARCH_NAMES[c.arch]),
        *shape,
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
