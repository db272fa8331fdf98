"""Checkpoint fuzz: damaged, lying and hostile files must be refused with CheckpointError or load a
model that works; never another exception, never code execution, never memory before the check.

Mostly mutations of small checkpoints (the one core.train writes in conftest, a tiny GRU, a tiny
.pt), plus a few of the real shipped files. CI: about 170 files; `pytest --full`: more than 500.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import pickle
import pickletools
import random
import re
import shutil
import struct
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import safetensors.torch
import torch

from bench.timing import stats_ms
from core.inference.batch import translate
from core.inference.trace import trace
from core.io.checkpoint import CheckpointError, LoadedModel, build_metadata, load_checkpoint, save_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT, GRU_CHECKPOINT
from core.model.registry import build_model
from core.text.pipeline import build_pipeline
from pages.ui.session_models import MAX_MODEL_MB
from tests.helpers.fixtures import synthetic_pairs, tiny_config
from tests.helpers.trace_schema import validate_trace

pytestmark = [pytest.mark.reliability, pytest.mark.slow]

APP_LIMIT = MAX_MODEL_MB * 2**20  # what the Models page passes as max_model_bytes
CI_RANDOM, FULL_RANDOM = 30, 420  # random mutations on top of the fixed catalogue (about 170 files)
CI_REAL, FULL_REAL = 3, 16  # random mutations of each real shipped file (about 1-2 s each to load)
MAX_PEAK_GROWTH_MB = 100  # a refused file must not have made the process allocate more than this
F16_NAN, F16_INF, F16_MAX = b"\x00\x7e", b"\x00\x7c", b"\xff\x7b"  # little-endian float16 NaN, +inf, 65504
SENTENCE = "I like tea."


@dataclass
class Case:
    name: str
    data: bytes
    suffix: str = ".safetensors"
    app_limit: bool = False  # load as the app does (bytes, max_model_bytes); else by path, as the CLI does
    memory: bool = False  # also measure the peak memory of the attempt
    expect: str | None = None  # where refusal is certain: a regex its message must match ("" = any message)


# --- safetensors surgery -------------------------------------------------------------------------


def split(data: bytes) -> tuple[dict[str, Any], bytes]:
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8 : 8 + length]), data[8 + length :]


def pack(header: dict[str, Any] | str | bytes, body: bytes) -> bytes:
    raw = header if isinstance(header, bytes) else (header if isinstance(header, str) else json.dumps(header)).encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + body


def canonical(data: bytes) -> bytes:
    """The same safetensors file with its metadata keys sorted: safetensors writes them in a random order (a Rust
    HashMap), and the fuzz must damage the same bytes in every run."""
    header, body = split(data)
    header["__metadata__"] = dict(sorted(header["__metadata__"].items()))
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    return pack(raw, body)


def with_metadata(data: bytes, **values: str | None) -> bytes:
    """Replace (or, with None, remove) metadata entries; the tensors stay as they are."""
    header, body = split(data)
    for key, value in values.items():
        if value is None:
            header["__metadata__"].pop(key, None)
        else:
            header["__metadata__"][key] = value
    return pack(header, body)


def with_config(data: bytes, **fields: Any) -> bytes:
    header, _ = split(data)
    config = json.loads(header["__metadata__"]["model_config"])
    config.update(fields)
    return with_metadata(data, model_config=json.dumps(config))


def with_vocab(data: bytes, key: str, change: Callable[[list], Any]) -> bytes:
    header, _ = split(data)
    return with_metadata(data, **{key: json.dumps(change(json.loads(header["__metadata__"][key])))})


def with_tensor_entry(data: bytes, change: Callable[[dict[str, Any]], None], name: str | None = None) -> bytes:
    """Edit one tensor's header entry (dtype, shape, offsets) without touching the data."""
    header, body = split(data)
    name = name or sorted(k for k in header if k != "__metadata__")[0]
    change(header[name])
    return pack(header, body)


def poke(data: bytes, value: bytes, tensor_index: int = 0, element: int = 0) -> bytes:
    """Overwrite one float16 element of a tensor (found through the header) with `value`."""
    header, _ = split(data)
    (length,) = struct.unpack("<Q", data[:8])
    entry = header[sorted(k for k in header if k != "__metadata__")[tensor_index]]
    assert entry["dtype"] == "F16"
    start = 8 + length + entry["data_offsets"][0] + 2 * element
    return data[:start] + value + data[start + 2 :]


def flip_bits(rng: random.Random, data: bytes, count: int, low: int = 0) -> bytes:
    out = bytearray(data)
    for _ in range(count):
        position = rng.randrange(low, len(out))
        out[position] ^= 1 << rng.randrange(8)
    return bytes(out)


def header_end(data: bytes) -> int:
    return 8 + struct.unpack("<Q", data[:8])[0]


def torch_bytes(obj: Any, **kwargs: Any) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer, **kwargs)
    return buffer.getvalue()


def one_storage(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The same tensors as views into one flat storage (at different offsets)."""
    flat = torch.cat([t.flatten() for t in tensors.values()])
    out, start = {}, 0
    for name, tensor in tensors.items():
        out[name] = flat[start : start + tensor.numel()].view(tensor.shape)
        start += tensor.numel()
    return out


def legacy_torch_bytes(obj: Any) -> bytes:
    """torch.save's pre-zip format, its storage keys (memory addresses, new in every process) renumbered. Storages
    are written in the order of their addresses: give it one storage (one_storage) for the same bytes every run."""
    data = torch_bytes(obj, _use_new_zipfile_serialization=False)
    stream = io.BytesIO(data)
    for _ in range(4):  # skip the magic number, protocol version, system info and the object itself, unexecuted
        for _ in pickletools.genops(stream):
            pass
    for index, key in enumerate(pickle.load(stream)):  # then comes the plain list of storage keys
        data = data.replace(key.encode(), f"{index:0{len(key)}d}".encode())
    return data


def recompressed(data: bytes, expand_mb: int = 0) -> bytes:
    """The same torch zip with deflated entries; expand_mb adds a member of that many MB of zeros (a zip bomb)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for info in source.infolist():
            if expand_mb and info.filename.endswith("/data.pkl"):
                member = zipfile.ZipInfo(info.filename)
                member.compress_type = zipfile.ZIP_DEFLATED
                with archive.open(member, "w", force_zip64=True) as stream:
                    chunk = bytes(2**20)
                    for _ in range(expand_mb):
                        stream.write(chunk)
            else:
                member = zipfile.ZipInfo(info.filename)  # a fixed date: the same bytes in every run
                archive.writestr(member, source.read(info.filename), compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


# --- hostile pickles -----------------------------------------------------------------------------


class Calls:
    """Unpickling this calls func(*args): proof of code execution if the loader ever ran it."""

    def __init__(self, func: Callable, *args: Any):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)


def hostile_payloads(marker: Path) -> list[Calls]:
    return [
        Calls(os.system, f"touch {marker}"),
        Calls(open, str(marker), "w"),
        Calls(eval, f"open({str(marker)!r}, 'w')"),
        Calls(exec, f"open({str(marker)!r}, 'w').close()"),
        Calls(shutil.copy, os.devnull, str(marker)),
    ]


# --- junk values ---------------------------------------------------------------------------------


def junk(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON-able value of a wrong or absurd kind (NaN and Infinity included: Python's json reads them)."""
    choices: list[Callable[[], Any]] = [
        lambda: rng.choice([0, -1, 1, 2**31, 2**63, -(2**63), 10**9, 10**30]),
        lambda: rng.choice([math.nan, math.inf, -math.inf, -0.0, 0.5, 1e308, 32.0]),
        lambda: rng.choice(["", "256", "transformer", "NaN", "\u202e", "🙂", "x" * 1000]),
        lambda: rng.choice([True, False, None]),
    ]
    if depth < 3:
        choices.append(lambda: [junk(rng, depth + 1) for _ in range(rng.randint(0, 3))])
        choices.append(lambda: {str(junk(rng, 3)): junk(rng, depth + 1) for _ in range(rng.randint(0, 3))})
    return rng.choice(choices)()


# --- the bases -----------------------------------------------------------------------------------


@dataclass
class Bases:
    transformer: bytes  # trained by core.train (its card; weights re-saved as float16, as core.train does)
    gru: bytes
    pt: bytes  # the transformer as .pt
    state_dict_pt: bytes  # an ordinary torch state dict, no metadata
    metadata: dict[str, str]
    tensors: dict[str, torch.Tensor]


def stable_card(card: dict[str, Any], folder: Path) -> dict[str, Any]:
    """The card core.train wrote, without what changes from run to run (temporary paths, date, timings),
    so the same seed damages the same bytes in every run."""
    card = json.loads(json.dumps(card).replace(str(folder), "/data"))
    card.update(date="2000-01-01T00:00:00+00:00", training_minutes=0.0)
    for epoch in card.get("history", []):
        epoch["seconds"] = 0.0
    return card


@pytest.fixture(scope="module")
def bases(trained_checkpoint, tmp_path_factory) -> Bases:
    folder = tmp_path_factory.mktemp("fuzz-bases")
    loaded = load_checkpoint(trained_checkpoint)
    card = stable_card(loaded.card, trained_checkpoint.parent)
    transformer = save_checkpoint(folder / "tiny.safetensors", loaded.model, loaded.pipeline, card)
    pt = save_checkpoint(folder / "tiny.pt", loaded.model, loaded.pipeline, card)
    pipeline = build_pipeline(synthetic_pairs(), "char", min_freq=1)
    torch.manual_seed(0)
    gru = build_model(tiny_config(pipeline, arch="rnn", n_heads=1, n_enc_layers=1, n_dec_layers=1)).eval()
    gru_path = save_checkpoint(folder / "gru.safetensors", gru, pipeline, {"note": "untrained"})
    tensors = {k: v.half() for k, v in loaded.model.state_dict().items()}
    return Bases(
        transformer=canonical(transformer.read_bytes()),
        gru=canonical(gru_path.read_bytes()),
        pt=pt.read_bytes(),
        state_dict_pt=torch_bytes(tensors),
        metadata=build_metadata(loaded.model.config, loaded.pipeline, card),
        tensors=tensors,
    )


# --- the cases -----------------------------------------------------------------------------------


def catalogue(b: Bases, marker: Path) -> list[Case]:
    """Every kind of damage the issue lists, once, with the outcome where it is certain."""
    t = b.transformer
    hl = header_end(t)
    cases = [
        Case("empty file", b"", expect="only 0 bytes"),
        Case("one byte", b"\x00", expect="not a checkpoint"),
        Case("text file renamed", "English\tChinese\nHello\t你好\n".encode(), expect="not a checkpoint"),
        Case("PNG header", b"\x89PNG\r\n\x1a\n" + bytes(64), expect="not a checkpoint"),
        Case("PDF header", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + bytes(64), expect="not a checkpoint"),
        Case("gzip of the checkpoint", b"\x1f\x8b\x08\x00" + t[:200], expect="not a checkpoint"),
        Case("JSON file", json.dumps(b.metadata).encode(), expect="not a checkpoint"),
        Case("UTF-8 BOM then a safetensors", b"\xef\xbb\xbf" + t, expect="not a checkpoint"),
        Case("HTML page", b"<!doctype html><script>alert(1)</script>" * 4, expect="not a checkpoint"),
        Case("random bytes", random.Random(1).randbytes(4096), expect=""),
        Case("all 0xff", b"\xff" * 4096, expect="not a checkpoint"),
        Case("plain safetensors, no metadata", safetensors.torch.save(b.tensors), expect="no Translucent metadata"),
        Case("metadata, no tensors", canonical(safetensors.torch.save({}, metadata=b.metadata)), expect="missing"),
    ]
    for cut in (0, 1, 7, 8, 9, 16, hl // 2, hl - 1, hl, hl + 1, (hl + len(t)) // 2, len(t) - 1):
        cases.append(Case(f"truncated at byte {cut}", t[:cut], expect=""))
    for value, label in ((2**64 - 1, "2^64-1"), (2**63, "2^63 (negative as signed)"), (2**32, "2^32")):
        cases.append(Case(f"header length {label}", struct.pack("<Q", value) + t[8:], expect="not a checkpoint"))
    for delta in (-8, -1, 1, 8):
        cases.append(Case(f"header length {delta:+d}", struct.pack("<Q", hl - 8 + delta) + t[8:], expect=""))
    cases.append(Case("header length 0", struct.pack("<Q", 0) + t[8:], expect="not valid JSON"))
    # huge or lying tensor declarations
    meta = split(t)[0]["__metadata__"]
    for label, entry in {
        "a 4 TB tensor": {"dtype": "F32", "shape": [10**12], "data_offsets": [0, 4 * 10**12]},
        "shape overflowing 64 bits": {"dtype": "F16", "shape": [2**62, 4], "data_offsets": [0, 0]},
        "zero-size enormous tensor": {"dtype": "F16", "shape": [0, 10**18], "data_offsets": [0, 0]},
        "negative shape": {"dtype": "F16", "shape": [-1], "data_offsets": [0, 2]},
        "reversed offsets": {"dtype": "U8", "shape": [4], "data_offsets": [8, 4]},
        "offsets past the end": {"dtype": "U8", "shape": [4], "data_offsets": [10**9, 10**9 + 4]},
        "string shape": {"dtype": "F16", "shape": "big", "data_offsets": [0, 2]},
    }.items():
        cases.append(Case(f"header declares {label}", pack({"__metadata__": meta, "w": entry}, bytes(8)), expect=""))
    many = {"__metadata__": meta} | {
        f"t{i}": {"dtype": "F16", "shape": [0], "data_offsets": [0, 0]} for i in range(20000)
    }
    cases.append(Case("20,000 empty tensors", pack(many, b""), expect="do not match"))
    deep = b'{"__metadata__": {"a": "b"}, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    cases.append(Case("header nested 100,000 deep", pack(deep, b""), expect="not valid JSON"))
    for dtype in ("F64", "F32", "BF16", "I16", "I64", "U8", "BOOL", "F8_E4M3", "F8_E5M2", "F4", "Q7", "", None, 5):
        data = with_tensor_entry(t, lambda e, d=dtype: e.update(dtype=d))
        cases.append(Case(f"dtype lie {dtype!r}", data, expect=None if dtype == "BF16" else "cannot be read|dtype"))
    for label, change in {
        "shape one longer": lambda e: e.update(shape=[e["shape"][0] + 1, *e["shape"][1:]]),
        "shape reversed": lambda e: e.update(shape=e["shape"][::-1] + [1]),
        "shape scalar": lambda e: e.update(shape=[]),
        "shape null": lambda e: e.update(shape=None),
        "offsets swapped": lambda e: e.update(data_offsets=e["data_offsets"][::-1]),
    }.items():
        cases.append(Case(f"tensor {label}", with_tensor_entry(t, change), expect=""))
    # metadata: format, config, vocabularies, tokenizer, card
    for key in ("format", "model_config", "src_vocab", "tgt_vocab", "tokenizer"):
        cases.append(Case(f"no {key}", with_metadata(t, **{key: None}), expect=f"'{key}' is missing"))
        cases.append(Case(f"{key} not JSON", with_metadata(t, **{key: "{oops"}), expect="not valid JSON"))
    cases += [
        Case("format version 2", with_metadata(t, format='{"name": "translucent", "version": 2}'), expect="version"),
        Case(
            "format version '1'", with_metadata(t, format='{"name": "translucent", "version": "1"}'), expect="version"
        ),
        Case("format a list", with_metadata(t, format="[1]"), expect="format"),
        Case("card not an object", with_metadata(t, card="[1, 2]"), expect="card"),
        Case("card nested 100,000 deep", with_metadata(t, card="[" * 100_000 + "]" * 100_000), expect="too deeply"),
        Case("card with a lone surrogate", with_metadata(t, card='{"command": "\\ud800"}'), expect="Unicode"),
        Case("card with NaN and junk", with_metadata(t, card='{"test": {"bleu": NaN}, "history": [null, 1, "x"]}')),
        Case("card of 5 MB", with_metadata(t, card=json.dumps({"command": "x" * 5_000_000}))),
        Case("no card", with_metadata(t, card=None)),
        Case("tokenizer bpe", with_metadata(t, tokenizer='{"tgt": "bpe"}'), expect="tokenizer"),
        Case("tokenizer jieba", with_metadata(t, tokenizer='{"src": "en_words", "tgt": "jieba"}')),
        Case("tokenizer null", with_metadata(t, tokenizer="null"), expect="tokenizer"),
    ]
    for label, fields, expect in (
        ("d_model 10^9", {"d_model": 10**9}, "d_model"),
        ("n_enc_layers 10^6", {"n_enc_layers": 10**6}, "n_enc_layers"),
        ("negative d_ff", {"d_ff": -64}, "d_ff"),
        ("zero heads", {"n_heads": 0}, "n_heads"),
        ("heads not dividing", {"n_heads": 3}, "does not divide"),
        ("d_model a string", {"d_model": "32"}, "d_model"),
        ("d_model a float", {"d_model": 32.0}, "d_model"),
        ("d_model NaN", {"d_model": math.nan}, "d_model"),
        ("d_model Infinity", {"d_model": math.inf}, "d_model"),
        ("d_model true", {"d_model": True}, "d_model"),
        ("d_model nested junk", {"d_model": {"a": [1, {"b": None}]}}, "d_model"),
        ("dropout NaN", {"dropout": math.nan}, "dropout"),
        ("dropout 1", {"dropout": 1.0}, "dropout"),
        ("vocab size 10^9", {"src_vocab_size": 10**9}, "src_vocab_size"),
        ("max_len 10^9", {"max_len": 10**9}, "max_len"),
        ("arch lstm", {"arch": "lstm"}, "arch"),
        ("arch rnn on Transformer weights", {"arch": "rnn", "n_heads": 1}, "tensor names"),
        ("untied on tied weights", {"tie_embeddings": False}, "missing"),
        ("pre-LN on post-LN weights", {"norm_first": True}, "missing"),
        ("unknown key", {"rope": True}, "unknown model_config keys"),
        ("a list", [], "must be a JSON object"),
    ):
        data = with_config(t, **fields) if isinstance(fields, dict) else with_metadata(t, model_config="[]")
        cases.append(Case(f"config {label}", data, expect=expect))
    for label, fields in {  # accepted: nothing in the tensors depends on them
        "max_len 2": {"max_len": 2},
        "max_len 3": {"max_len": 3},
        "max_len 16384": {"max_len": 16384},
        "one head": {"n_heads": 1},
        "32 heads": {"n_heads": 32},
        "dropout 0.99": {"dropout": 0.99},
    }.items():
        cases.append(Case(f"config {label} (harmless)", with_config(t, **fields)))
    huge = {  # within every range, yet hundreds of GB: refused by the memory check before anything is allocated
        "d_model": 8192,
        "n_heads": 8,
        "n_enc_layers": 48,
        "n_dec_layers": 48,
        "d_ff": 65536,
        "max_len": 16384,
    }
    big = {"d_model": 1024, "d_ff": 4096, "n_heads": 8, "n_enc_layers": 6, "n_dec_layers": 6}  # 0.7 GB
    cases += [
        Case("config of 100+ GB, app limit", with_config(t, **huge), app_limit=True, memory=True, expect="MiB"),
        Case("config of 100+ GB, CLI", with_config(t, **huge), memory=True, expect="do not match"),
        Case("config of 0.7 GB, app limit", with_config(t, **big), app_limit=True, memory=True, expect="MiB"),
    ]
    for label, change, expect in (
        ("ints", lambda v: list(range(len(v))), "list of strings"),
        ("nulls", lambda v: [None] * len(v), "list of strings"),
        ("a string", lambda v: "".join(v), "list of strings"),
        ("an object", lambda v: dict.fromkeys(v, 1), "list of strings"),
        ("nested lists", lambda v: [[x] for x in v], "list of strings"),
        ("a duplicate", lambda v: v[:-1] + [v[4]], "must not repeat"),
        ("no specials", lambda v: v[4:] + ["x1", "x2", "x3", "x4"], "must start with"),
        ("specials reordered", lambda v: [v[1], v[0], *v[2:]], "must start with"),
        ("empty", lambda v: [], "must start with"),
        ("one extra token", lambda v: [*v, "extra"], "vocabulary sizes"),
        ("a lone surrogate", lambda v: [*v[:-1], "\ud800"], "Unicode"),
    ):
        for key in ("src_vocab", "tgt_vocab"):
            cases.append(Case(f"{key} {label}", with_vocab(t, key, change), expect=expect))
    tokens = {"<script>": "<script>alert(1)</script>", "empty": "", "RTL": "\u202e", "long": "y" * 10_000}
    for label, token in tokens.items():
        change = lambda v, x=token: [*v[:-1], x]  # noqa: B023 (bound through the default)
        cases.append(Case(f"tgt_vocab token {label} (harmless)", with_vocab(t, "tgt_vocab", change)))
    # weights
    cases += [
        Case("a NaN weight", poke(t, F16_NAN), expect="NaN or infinite"),
        Case("an infinite weight", poke(t, F16_INF, tensor_index=3, element=5), expect="NaN or infinite"),
        Case("a weight of 65504 (harmless)", poke(t, F16_MAX, tensor_index=2)),
    ]
    # .pt files
    structured = {"metadata": b.metadata, "tensors": b.tensors}
    refused = "nothing in it was executed"
    for index, payload in enumerate(hostile_payloads(marker)):
        cases.append(
            Case(f"hostile torch.save #{index}", torch_bytes({**structured, "x": payload}), ".pt", expect=refused)
        )
        cases.append(Case(f"hostile raw pickle #{index}", pickle.dumps(payload, protocol=4), ".pt", expect=refused))
    first, second = hostile_payloads(marker)[:2]
    cases.append(Case("hostile pickle, protocol 0", pickle.dumps(first, protocol=0), ".pt", expect="not a checkpoint"))
    cases.append(Case("hostile pickle named .safetensors", pickle.dumps(second, protocol=2), expect=refused))

    def tensors_as(change: Callable[[torch.Tensor], torch.Tensor]) -> dict[str, torch.Tensor]:
        return {name: change(tensor) for name, tensor in b.tensors.items()}

    shared = one_storage(b.tensors)
    absurd = {**b.metadata, "model_config": json.dumps({"d_model": -5, "n_layers": [1e308]})}
    for label, payload, expect in (
        ("an ordinary state dict", b.tensors, "must hold"),
        ("an absurd config", {**structured, "metadata": absurd}, "model_config"),
        ("non-string metadata", {**structured, "metadata": dict.fromkeys(b.metadata, 1)}, "missing"),
        ("integer tensor names", {**structured, "tensors": dict(enumerate(b.tensors.values()))}, "names"),
        ("sparse tensors", {**structured, "tensors": tensors_as(lambda v: v.float().to_sparse())}, "dense"),
        ("meta tensors", {**structured, "tensors": tensors_as(lambda v: torch.empty(v.shape, device="meta"))}, "dense"),
        ("float8 tensors", {**structured, "tensors": tensors_as(lambda v: v.to(torch.float8_e4m3fn))}, "dtype"),
        ("float64 tensors (harmless)", {**structured, "tensors": tensors_as(lambda v: v.double())}, None),
        ("parameters (harmless)", {**structured, "tensors": tensors_as(torch.nn.Parameter)}, None),
        ("views into one storage (harmless)", {**structured, "tensors": shared}, None),
    ):
        cases.append(Case(f"a .pt with {label}", torch_bytes(payload), ".pt", expect=expect))
    cases += [
        Case("a legacy-format .pt (harmless)", legacy_torch_bytes({**structured, "tensors": shared}), ".pt"),
        Case("a pickle nesting 100,000 lists", nested_pickle(100_000), ".pt", expect="must hold|refused"),
        Case("a zip that is not a torch file", plain_zip(), ".pt", expect="refused"),
        Case("a torch zip, deflated", recompressed(b.pt), ".pt", expect="compressed"),
        Case("a torch zip with its end cut", b.pt[: len(b.pt) - 30], ".pt", expect="zip|refused"),
    ]
    return cases


def nested_pickle(depth: int) -> bytes:
    """A protocol-2 pickle of lists nested `depth` deep, written opcode by opcode (pickle.dumps would recurse)."""
    return b"\x80\x02" + b"]" * depth + b"a" * (depth - 1) + b"."


def plain_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(zipfile.ZipInfo("readme.txt"), "not a model")
        archive.writestr(zipfile.ZipInfo("data.pkl"), pickle.dumps({"metadata": {}, "tensors": {}}))
    return out.getvalue()


def random_cases(b: Bases, rng: random.Random, count: int) -> list[Case]:
    """Seeded random damage of the small checkpoints: bit and byte flips, cuts, splices, junk metadata."""
    sources = {"transformer": (b.transformer, ".safetensors"), "gru": (b.gru, ".safetensors"), "pt": (b.pt, ".pt")}
    cases = []
    for index in range(count):
        label = rng.choices(list(sources), weights=(6, 2, 2))[0]
        data, suffix = sources[label]
        hl = header_end(data) if suffix == ".safetensors" else 0
        op = rng.choice(
            [
                "bit flips",
                "weight bit flips",
                "header byte flips",
                "cut",
                "splice",
                "delete",
                "metadata junk",
                "config junk",
            ]
            if suffix == ".safetensors"
            else ["bit flips", "cut", "splice", "delete"]
        )
        if op == "bit flips":
            out = flip_bits(rng, data, rng.randint(1, 16))
        elif op == "weight bit flips":
            out = flip_bits(rng, data, rng.randint(1, 64), low=hl)
        elif op == "header byte flips":
            out = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                out[rng.randrange(8, hl)] = rng.randrange(256)
            out = bytes(out)
        elif op == "cut":
            out = data[: rng.randrange(len(data))]
        elif op == "splice":
            at = rng.randrange(len(data))
            out = data[:at] + rng.randbytes(rng.randint(1, 64)) + data[at:]
        elif op == "delete":
            at = rng.randrange(len(data))
            out = data[:at] + data[at + rng.randint(1, 64) :]
        elif op == "metadata junk":
            key = rng.choice(["format", "model_config", "src_vocab", "tgt_vocab", "tokenizer", "card"])
            out = with_metadata(data, **{key: json.dumps(junk(rng))})
        else:
            header, _ = split(data)
            field = rng.choice(list(json.loads(header["__metadata__"]["model_config"])))
            out = with_config(data, **{field: junk(rng)})
        cases.append(Case(f"random #{index}: {op} of the tiny {label}", out, suffix, app_limit=index % 3 == 0))
    return cases


def real_cases(rng: random.Random, count: int) -> list[Case]:
    """A few mutations of the shipped files themselves (the formats of a real 7 M / 3 M parameter model)."""
    cases = []
    for label, path in (("Transformer", DEFAULT_CHECKPOINT), ("GRU", GRU_CHECKPOINT)):
        data = path.read_bytes()
        hl = header_end(data)
        cases.append(Case(f"shipped {label}: a NaN weight", poke(data, F16_NAN, 1, 7), expect="NaN or infinite"))
        for index in range(count):
            op = ("weight bit flips", "cut", "header byte flip")[index % 3]
            if op == "weight bit flips":
                out = flip_bits(rng, data, rng.randint(1, 32), low=hl)
            elif op == "cut":
                out = data[: rng.randrange(len(data))]
            else:
                out = bytearray(data)
                out[rng.randrange(8, hl)] = rng.randrange(32, 127)
                out = bytes(out)
            cases.append(Case(f"shipped {label} #{index}: {op}", out, app_limit=index % 2 == 0))
    return cases


# --- running a case --------------------------------------------------------------------------------


def peak_growth_mb(run: Callable[[], None]) -> float | None:
    """Peak resident memory added while run() ran (Linux: VmHWM reset through clear_refs), or None if unknown."""

    def status(field: str) -> int:
        return int(re.search(rf"{field}:\s+(\d+)", Path("/proc/self/status").read_text()).group(1))

    try:
        Path("/proc/self/clear_refs").write_text("5")
        before = status("VmRSS")
    except (OSError, AttributeError):
        run()
        return None
    run()
    return (status("VmHWM") - before) / 1024


def check_loaded(loaded: LoadedModel) -> None:
    """A model that loads must be usable: eval mode, finite weights, displayable text, a translation, a trace."""
    assert not loaded.model.training and not any(p.requires_grad for p in loaded.model.parameters())
    loaded.config.validate()
    assert all(bool(torch.isfinite(p).all()) for p in loaded.model.parameters())
    # every string the app shows must be encodable (a lone surrogate makes Streamlit raise)
    json.dumps(
        [loaded.card, loaded.pipeline.src_vocab.itos, loaded.pipeline.tgt_vocab.itos], ensure_ascii=False
    ).encode()
    [result] = translate(loaded.model, loaded.pipeline, [SENTENCE])
    assert isinstance(result.text, str)
    result.text.encode()
    validate_trace(trace(loaded.model, loaded.pipeline, SENTENCE).to_json())


def attempt(case: Case, path: Path) -> tuple[str, str | None, float | None]:
    """Load one case; returns (outcome, failure or None, peak memory growth in MB or None)."""
    outcome: dict[str, Any] = {}

    def load() -> None:
        try:
            if case.app_limit:
                outcome["loaded"] = load_checkpoint(case.data, max_model_bytes=APP_LIMIT)
            else:
                outcome["loaded"] = load_checkpoint(path)
        except CheckpointError as err:
            outcome["error"] = err

    growth = None
    if case.memory:
        growth = peak_growth_mb(load)
    else:
        load()
    if "error" in outcome:
        message = str(outcome["error"])
        if not message or (case.expect is not None and not re.search(case.expect, message)):
            return "rejected", f"message {message[:200]!r} does not match {case.expect!r}", growth
        return "rejected", None, growth
    if case.expect is not None:
        return "loaded", f"loaded, but expected CheckpointError matching {case.expect!r}", growth
    check_loaded(outcome["loaded"])
    return "loaded", None, growth


@pytest.mark.filterwarnings("ignore:Detected pickle protocol", "ignore:TypedStorage is deprecated")
def test_fuzzed_checkpoints_are_refused_or_load_a_working_model(bases, tmp_path, monkeypatch, full_size, report_result):
    """Hundreds of damaged, lying and hostile files: CheckpointError or a working model, nothing else."""
    monkeypatch.chdir(tmp_path)  # the hostile pickles name a relative marker file: same bytes in every run
    marker = Path("code-was-executed")
    rng = random.Random(7)
    cases = catalogue(bases, marker)
    cases += random_cases(bases, rng, FULL_RANDOM if full_size else CI_RANDOM)
    cases += real_cases(rng, FULL_REAL if full_size else CI_REAL)
    if full_size:  # a zip bomb: 1 MB on disk, 1 GB once inflated (CI: 256 MB, the same proof)
        cases.append(Case("zip bomb (1 GB inflated)", recompressed(bases.pt, 1024), ".pt", True, True, "compressed"))
    else:
        cases.append(Case("zip bomb (256 MB inflated)", recompressed(bases.pt, 256), ".pt", True, True, "compressed"))
    assert len({case.name for case in cases}) == len(cases)

    outcomes: Counter[str] = Counter()
    seconds: list[float] = []
    growths: list[float] = []
    failures: list[str] = []
    for index, case in enumerate(cases):
        path = tmp_path / f"case-{index}{case.suffix}"
        path.write_bytes(case.data)
        start = time.perf_counter()
        try:
            outcome, failure, growth = attempt(case, path)
        except BaseException as err:  # anything but CheckpointError (or a failed check of a loaded model)
            if isinstance(err, KeyboardInterrupt):
                raise
            outcome, failure, growth = "other exception", f"{type(err).__name__}: {str(err)[:300]}", None
        seconds.append(time.perf_counter() - start)
        path.unlink()
        outcomes[outcome] += 1
        if failure:
            failures.append(f"{case.name}: {failure}")
        if growth is not None:
            growths.append(growth)
            if growth > MAX_PEAK_GROWTH_MB:
                failures.append(f"{case.name}: peak memory grew by {growth:.0f} MB before it was refused")
        if marker.exists():
            failures.append(f"{case.name}: CODE WAS EXECUTED (the marker file exists)")
            marker.unlink()

    digest = hashlib.sha256(b"".join(hashlib.sha256(case.data).digest() for case in cases)).hexdigest()[:12]
    memory = f"peak memory growth at most {max(growths):.0f} MB" if growths else "peak memory not measurable here"
    report_result(
        "checkpoint fuzz",
        f"{len(cases)} files (sha256 of all {digest}; {outcomes['rejected']} rejected with CheckpointError, {outcomes['loaded']} loaded and "
        f"translated, {outcomes['other exception']} other exceptions), {len(failures)} failures, marker file never "
        f"created: {not any('EXECUTED' in f for f in failures)}; load {stats_ms(seconds)} "
        f"(slowest: {max(zip(seconds, (c.name for c in cases)))[1]}); "
        f"{len(growths)} huge-model and zip-bomb files: {memory}",
    )
    assert not failures, f"{len(failures)} of {len(cases)} files failed:\n" + "\n".join(failures[:40])
    assert outcomes["rejected"] and outcomes["loaded"]  # both outcomes really occur
