"""The one saver and the one loader of model checkpoints, for every caller (CLI, app, tests).

A checkpoint is a .safetensors file: the model's tensors plus string metadata, each value
JSON: `format`, `model_config`, `src_vocab`, `tgt_vocab`, `tokenizer`, `card`.
A .pt file holds {"metadata": {same strings}, "tensors": {name: tensor}} and is read only
with torch.load(weights_only=True). Nothing in a checkpoint is ever executed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import safetensors.torch
import torch

from core.io.card import ModelCard
from core.model.base import Seq2Seq
from core.model.config import ModelConfig
from core.model.registry import build_model, check_config
from core.text.pipeline import TextPipeline
from core.text.tokenize import ZH_TOKENIZERS
from core.text.vocab import Vocab

FORMAT_NAME = "translucent"
FORMAT_VERSION = 1
MAX_HEADER_BYTES = 20 * 1024 * 1024  # safetensors JSON header (metadata + tensor index)
FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)  # float8/float4 lack isfinite
REQUIRED_METADATA = ("format", "model_config", "src_vocab", "tgt_vocab", "tokenizer")


class CheckpointError(ValueError):
    """The file is not a usable checkpoint; the message says what is wrong and how to fix it."""


@dataclass
class LoadedModel:
    model: Seq2Seq  # eval mode, gradients off: safe to share read-only between users
    pipeline: TextPipeline
    config: ModelConfig
    card: dict[str, Any]  # as stored in the file (untrusted); model_card is its checked reading
    metadata: dict[str, str]
    sha256: str = ""  # of the file's bytes: names this model in caches (two files, two keys)
    stored_tensors: list[tuple[str, tuple[int, ...], str]] = field(default_factory=list)  # as in the file
    model_card: ModelCard = field(default_factory=ModelCard)

    @property
    def parameter_count(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


def build_metadata(config: ModelConfig, pipeline: TextPipeline, card: dict[str, Any] | ModelCard) -> dict[str, str]:
    if isinstance(card, ModelCard):
        card = card.to_json()
    return {
        "format": json.dumps({"name": FORMAT_NAME, "version": FORMAT_VERSION}),
        "model_config": json.dumps(config.to_dict()),
        "src_vocab": pipeline.src_vocab.to_json(),
        "tgt_vocab": pipeline.tgt_vocab.to_json(),
        "tokenizer": json.dumps(pipeline.settings()),
        "card": json.dumps(card, ensure_ascii=False),
    }


def save_checkpoint(
    path: str | Path,
    model: Seq2Seq,
    pipeline: TextPipeline,
    card: ModelCard | dict[str, Any] | None = None,
    half: bool = True,
) -> Path:
    """Write atomically (a temporary file, then rename), so an interrupted save never leaves half a file.

    half=True stores floating tensors as float16 (half the size); loading casts back to float32.
    """
    path = Path(path)
    dtype = torch.float16 if half else torch.float32
    tensors = {name: t.detach().to("cpu", dtype).contiguous() for name, t in model.state_dict().items()}
    metadata = build_metadata(model.config, pipeline, card or {})
    temporary = path.with_name(path.name + ".tmp")
    if path.suffix == ".pt":
        torch.save({"metadata": metadata, "tensors": tensors}, temporary)
    else:
        safetensors.torch.save_file(tensors, str(temporary), metadata=metadata)
    os.replace(temporary, path)
    return path


def load_checkpoint(
    source: str | Path | bytes, device: str | torch.device = "cpu", max_model_bytes: int | None = None
) -> LoadedModel:
    """Load and fully validate a checkpoint from a path or raw bytes; raise CheckpointError if invalid.

    max_model_bytes refuses, before allocating anything, a model whose float32 weights and buffers
    would need more memory (the app bounds uploads with it: a small file can declare a huge model).
    """
    data = _read_bytes(source)
    # safetensors: 8-byte header length, then the JSON header; .pt: a zip archive or a bare pickle
    if data[8:9] != b"{" and (data[:4] == b"PK\x03\x04" or data[:1] == b"\x80"):
        metadata, tensors = _read_pt(data)
    else:
        metadata, tensors = _read_safetensors(data)
    return _build(metadata, tensors, device, max_model_bytes, hashlib.sha256(data).hexdigest())


def _read_bytes(source: str | Path | bytes) -> bytes:
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    try:
        return Path(source).read_bytes()
    except OSError as err:
        raise CheckpointError(f"cannot read checkpoint file {source}: {err.strerror or err}") from None


def _read_safetensors(data: bytes) -> tuple[dict[str, str], dict[str, torch.Tensor]]:
    if len(data) < 10:
        raise CheckpointError(
            f"not a checkpoint: the file has only {len(data)} bytes. Expected a .safetensors or .pt file written by core.train."
        )
    (header_len,) = struct.unpack("<Q", data[:8])
    if data[8:9] != b"{" or header_len > MAX_HEADER_BYTES:
        raise CheckpointError(
            "not a checkpoint: this is neither a .safetensors file nor a .pt archive. Upload a file written by core.train."
        )
    if 8 + header_len > len(data):
        raise CheckpointError(
            f"the file is truncated: its header says {header_len} bytes but only {len(data) - 8} follow. Download or copy it again."
        )
    try:
        header = json.loads(data[8 : 8 + header_len])
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):  # RecursionError: absurdly nested JSON
        raise CheckpointError("the safetensors header is not valid JSON: the file is damaged") from None
    if not isinstance(header, dict):
        raise CheckpointError("the safetensors header is not a JSON object: the file is damaged")
    metadata = header.get("__metadata__")
    if not isinstance(metadata, dict):
        raise CheckpointError(
            "the file has no Translucent metadata (format, model_config, vocabularies): it is a plain safetensors file, not a checkpoint written by core.train"
        )
    try:
        tensors = safetensors.torch.load(data)
    except Exception as err:  # the Rust parser raises its own error types
        raise CheckpointError(f"the tensors cannot be read ({err}); the file is truncated or damaged") from None
    return metadata, tensors


def _read_pt(data: bytes) -> tuple[dict[str, str], dict[str, torch.Tensor]]:
    if data[:4] == b"PK\x03\x04":
        _check_zip(data)
    try:
        payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as err:  # the safe unpickler raises many error types; all mean "refused"
        raise CheckpointError(
            f"the .pt file was refused by the safe loader (torch.load weights_only=True): {str(err).splitlines()[0][:200]}. "
            "Only plain tensor archives written by core.train are accepted; nothing in it was executed."
        ) from None
    if (
        not isinstance(payload, dict)
        or not isinstance(payload.get("metadata"), dict)
        or not isinstance(payload.get("tensors"), dict)
    ):
        raise CheckpointError(
            'the .pt file must hold {"metadata": {...}, "tensors": {...}} as written by core.checkpoint.save_checkpoint'
        )
    tensors = payload["tensors"]
    if not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in tensors.items()):
        raise CheckpointError('the .pt file\'s "tensors" must map names to tensors')
    if not all(v.layout == torch.strided and v.device.type == "cpu" for v in tensors.values()):
        raise CheckpointError('the .pt file\'s "tensors" must be ordinary dense tensors (not sparse, not meta)')
    return payload["metadata"], tensors


def _check_zip(data: bytes) -> None:
    """torch.save never compresses; a compressed entry could expand to any size in memory before any check."""
    try:
        entries = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except Exception as err:  # zipfile raises several error types on damaged archives
        raise CheckpointError(f"the .pt file is not a readable zip archive ({err}); the file is damaged") from None
    if any(entry.compress_type != zipfile.ZIP_STORED for entry in entries):
        raise CheckpointError(
            "the .pt archive has compressed entries; torch.save never compresses, and a compressed archive "
            "could expand to any size in memory. Save the checkpoint again with core.checkpoint.save_checkpoint."
        )


def _json_field(metadata: dict[str, Any], key: str) -> Any:
    value = metadata.get(key)
    if not isinstance(value, str):
        raise CheckpointError(
            f"the metadata field {key!r} is missing; a checkpoint needs {', '.join(REQUIRED_METADATA)}"
        )
    try:
        parsed = json.loads(value)
        json.dumps(parsed, ensure_ascii=False).encode("utf-8")  # lone surrogates ("\\ud800") break every display
    except json.JSONDecodeError as err:
        raise CheckpointError(
            f"the metadata field {key!r} is not valid JSON ({err.msg} at character {err.pos})"
        ) from None
    except RecursionError:
        raise CheckpointError(f"the metadata field {key!r} is nested too deeply to be read") from None
    except UnicodeEncodeError:
        raise CheckpointError(
            f"the metadata field {key!r} holds text that is not valid Unicode (a lone surrogate such as \\ud800)"
        ) from None
    return parsed


def _build(
    metadata: dict[str, Any],
    tensors: dict[str, torch.Tensor],
    device: str | torch.device,
    max_model_bytes: int | None,
    sha256: str,
) -> LoadedModel:
    fmt = _json_field(metadata, "format")
    if not isinstance(fmt, dict) or fmt.get("name") != FORMAT_NAME:
        raise CheckpointError(f"format is {fmt!r}; expected a {FORMAT_NAME!r} checkpoint")
    if fmt.get("version") != FORMAT_VERSION:
        raise CheckpointError(
            f"unknown format version {fmt.get('version')!r}; this version of Translucent reads version {FORMAT_VERSION}"
        )
    raw_config = _json_field(metadata, "model_config")
    if not isinstance(raw_config, dict):
        raise CheckpointError("model_config must be a JSON object")
    try:
        config = ModelConfig.from_dict(raw_config)
        check_config(config)
        src_vocab = Vocab(_json_field(metadata, "src_vocab"))
        tgt_vocab = Vocab(_json_field(metadata, "tgt_vocab"))
    except (ValueError, TypeError) as err:
        raise CheckpointError(f"invalid checkpoint metadata: {err}") from None
    if len(src_vocab) != config.src_vocab_size or len(tgt_vocab) != config.tgt_vocab_size:
        raise CheckpointError(
            f"vocabulary sizes ({len(src_vocab)} source, {len(tgt_vocab)} target) do not match model_config "
            f"({config.src_vocab_size}, {config.tgt_vocab_size})"
        )
    tokenizer = _json_field(metadata, "tokenizer")
    if not isinstance(tokenizer, dict) or tokenizer.get("tgt") not in ZH_TOKENIZERS:
        raise CheckpointError(
            f"tokenizer settings {tokenizer!r} name no known Chinese tokenizer ({', '.join(ZH_TOKENIZERS)})"
        )
    card = _json_field(metadata, "card") if "card" in metadata else {}
    if not isinstance(card, dict):
        raise CheckpointError("the card must be a JSON object")
    _check_tensors(config, tensors, max_model_bytes)
    model = build_model(config)
    model.load_state_dict({k: v.float() for k, v in tensors.items()})
    model.to(device).eval().requires_grad_(False)
    pipeline = TextPipeline(src_vocab, tgt_vocab, tokenizer["tgt"])
    stored = [(name, tuple(t.shape), str(t.dtype).removeprefix("torch.")) for name, t in sorted(tensors.items())]
    return LoadedModel(model, pipeline, config, card, dict(metadata), sha256, stored, ModelCard.from_json(card))


def _check_tensors(config: ModelConfig, tensors: dict[str, torch.Tensor], max_model_bytes: int | None) -> None:
    """Names and shapes must match the config exactly (checked on the meta device: no memory used)."""
    with torch.device("meta"):
        skeleton = build_model(config)
    if max_model_bytes is not None:
        needed = 4 * sum(t.numel() for t in (*skeleton.parameters(), *skeleton.buffers()))
        if needed > max_model_bytes:
            raise CheckpointError(
                f"this model would need {needed / 2**20:,.0f} MiB of memory; this app accepts up to "
                f"{max_model_bytes / 2**20:,.0f} MiB per uploaded model (check d_model, layers, vocabulary and max_len)"
            )
    expected = {k: tuple(v.shape) for k, v in skeleton.state_dict().items()}
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise CheckpointError(
            "tensor names do not match the model_config: "
            + (f"missing {missing[:5]}{' …' if len(missing) > 5 else ''}" if missing else "")
            + ("; " if missing and unexpected else "")
            + (f"unexpected {unexpected[:5]}{' …' if len(unexpected) > 5 else ''}" if unexpected else "")
        )
    for name, shape in expected.items():
        tensor = tensors[name]
        if tuple(tensor.shape) != shape:
            raise CheckpointError(
                f"tensor {name} has shape {tuple(tensor.shape)}; the model_config and vocabularies need {shape}"
            )
        if tensor.dtype not in FLOAT_DTYPES:
            raise CheckpointError(
                f"tensor {name} has dtype {tensor.dtype}; expected floating point (float16, bfloat16, float32 or float64)"
            )
        if not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(f"tensor {name} contains NaN or infinite values")
