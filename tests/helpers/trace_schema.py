"""Checks a trace dict against DESIGN.md's schema: the JSON Schema file (types, required fields),
then in code what a schema cannot say: shapes that line up with the token lists and the model's
layers (the architecture registry says which kinds exist), rows that sum to one, and a causal
decoder self-attention. jsonschema takes about as long per number as a trace takes to make, so it
sees one row of each attention kind; numpy checks every weight's range."""

from __future__ import annotations

import json
import math
from functools import lru_cache

import jsonschema
import numpy as np

from core.io.paths import ROOT
from core.model.registry import spec_for

SCHEMA_FILE = ROOT / "core" / "io" / "schemas" / "trace.schema.json"


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _rows(nested):
    for layer in nested:
        for head in layer:
            yield from head


def _one_row(maps: list) -> list:
    return [[head[:1] for head in layer[:1]] for layer in maps[:1]]


def validate_trace(data: dict) -> None:
    _validator().validate({**data, "attention": {kind: _one_row(maps) for kind, maps in data["attention"].items()}})
    S, T = len(data["source_tokens"]), len(data["decoder_tokens"])
    assert len(data["steps"]) == T and (T == 0 or data["decoder_tokens"][0] == "<bos>")
    for t, step in enumerate(data["steps"]):
        if t + 1 < T:
            assert data["decoder_tokens"][t + 1] == step["token"]
    model = data["model"]
    heads = model["n_heads"]
    layers = spec_for(model["arch"]).attention_layers(*model["n_layers"])
    attention = data["attention"]
    for name, rows, cols in (("encoder", S, S), ("decoder", T, T), ("cross", T, S)):
        maps = attention[name]
        assert len(maps) == layers[name] and all(len(layer) == heads for layer in maps), name
        for layer in maps:
            for head in layer:
                assert len(head) == rows and all(len(row) == cols for row in head), name
        weights = np.array(maps, dtype=float)
        assert weights.size == 0 or (weights.min() >= 0.0 and weights.max() <= 1.0), name
        for row in _rows(maps):
            assert math.isclose(sum(row), 1.0, abs_tol=1e-4), name
    for layer in attention["decoder"]:
        for head in layer:
            for q, row in enumerate(head):
                assert all(w == 0.0 for w in row[q + 1 :])
    if "lens" in data:
        lens = data["lens"]
        assert len(lens) == model["n_layers"][1] and all(len(layer) == T for layer in lens), "lens"
        assert T == 0 or lens[-1] == [step["top_k"] for step in data["steps"]], "the lens's last layer is top_k"
