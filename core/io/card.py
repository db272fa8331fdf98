"""The model card: what a checkpoint says about how it was made. One schema for both sides: the
trainer writes a ModelCard (`to_json`), and the app reads a card from any uploaded file with
`ModelCard.from_json`, which keeps each field only if it has the schema's type (a malformed or
missing field becomes None or empty; nothing in a card is trusted)."""

from __future__ import annotations

import math
import types
import typing
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from numbers import Real
from typing import Any, TypeVar


@dataclass
class DataInfo:
    file: str | None = None  # the data file's name (not its path)
    sha256: str | None = None
    pairs: int | None = None  # sentence pairs read
    malformed_lines: int | None = None
    limit_pairs: int | None = None  # --limit-pairs (0 = the whole file)


@dataclass
class SplitSize:
    pairs: int | None = None
    english_sentences: int | None = None


@dataclass
class SplitSizes:
    train: SplitSize | None = None
    dev: SplitSize | None = None
    test: SplitSize | None = None


@dataclass
class VocabInfo:
    src: int | None = None
    tgt: int | None = None
    tgt_tokenizer: str | None = None


@dataclass
class EpochRecord:
    """One row of the training history."""

    epoch: int | None = None
    train_loss: float | None = None
    dev_loss: float | None = None
    dev_bleu: float | None = None
    dev_chrf: float | None = None
    lr: float | None = None
    seconds: float | None = None


@dataclass
class ProbeSnapshot:
    """A probe sentence's cross-attention after one epoch, mean over layers and heads."""

    source_tokens: list[str] | None = None
    decoder_tokens: list[str] | None = None
    cross: list[list[float]] | None = None  # (decoder tokens, source tokens)


@dataclass
class EpochSnapshots:
    epoch: int | None = None
    probes: list[ProbeSnapshot] = field(default_factory=list)  # in the order of AttentionSnapshots.probes


@dataclass
class AttentionSnapshots:
    probes: list[str] | None = None  # the probe sentences
    epochs: list[EpochSnapshots] = field(default_factory=list)


@dataclass
class HeldOutScores:
    bleu: float | None = None
    chrf: float | None = None
    sentences: int | None = None
    references: int | None = None
    decoding: str | None = None


@dataclass
class ModelCard:
    command: str | None = None  # the training command line, to reproduce the model
    model_config: dict[str, Any] = field(default_factory=dict)
    train_config: dict[str, Any] = field(default_factory=dict)
    data: DataInfo | None = None
    split: SplitSizes | None = None
    skipped_long_pairs: int | None = None
    vocab: VocabInfo | None = None
    torch: str | None = None  # torch version
    device: str | None = None
    processes: int | None = None  # data-parallel training processes
    history: list[EpochRecord] = field(default_factory=list)
    best_epoch: int | None = None  # by dev BLEU; the checkpoint holds its weights
    attention_snapshots: AttentionSnapshots | None = None
    date: str | None = None
    training_minutes: float | None = None
    test: HeldOutScores | None = None  # measured once, after training, on the held-out test split
    status: str | None = None  # set when training was interrupted before its first epoch ended

    def to_json(self) -> dict[str, Any]:
        """The card as JSON-ready data, without fields that are None."""
        return _without_none(asdict(self))

    @classmethod
    def from_json(cls, raw: Any) -> ModelCard:
        """Read an untrusted card (parsed JSON): every field is checked against the schema."""
        return _read(cls, raw if isinstance(raw, dict) else {})


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


T = TypeVar("T")
_MISSING = object()


def _read(schema: type[T], data: dict[str, Any]) -> T:
    """A dataclass from a dict, field by field; unknown keys are ignored."""
    hints = typing.get_type_hints(schema)
    values = {}
    for f in fields(schema):  # type: ignore[arg-type]
        value = _coerce(hints[f.name], data.get(f.name, _MISSING))
        if value is not _MISSING:
            values[f.name] = value
    return schema(**values)


def _coerce(hint: Any, value: Any) -> Any:
    """value as the type `hint`, or _MISSING (the field keeps its default) when it does not fit."""
    if value is _MISSING or value is None:
        return _MISSING
    optional = typing.get_origin(hint) in (typing.Union, types.UnionType)
    if optional:
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if is_dataclass(hint):
        return _read(hint, value) if isinstance(value, dict) else _MISSING
    if origin is dict:
        return value if isinstance(value, dict) else _MISSING
    if origin is list:
        if not isinstance(value, list):
            return _MISSING
        if is_dataclass(args[0]):  # a malformed item stays as an empty record, so positions still line up
            return [_read(args[0], item if isinstance(item, dict) else {}) for item in value]
        items = [_coerce(args[0], item) for item in value]
        return _MISSING if any(item is _MISSING for item in items) else items  # all or nothing
    if hint is str:
        return value if isinstance(value, str) else _MISSING
    if hint is float:
        return float(value) if _finite(value) else _MISSING
    if hint is int:
        return int(value) if _finite(value) and float(value).is_integer() else _MISSING
    raise TypeError(f"the card schema uses an unsupported type {hint!r}")


def _finite(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(float(value))
