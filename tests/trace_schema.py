"""Checks a trace dict against DESIGN.md's schema: types, shapes that line up with the token
lists, rows that sum to one, and a causal decoder self-attention."""

from __future__ import annotations

import math


def _rows(nested):
    for layer in nested:
        for head in layer:
            yield from head


def validate_trace(data: dict) -> None:
    assert isinstance(data["source"], str) and isinstance(data["translation"], str)
    S, T = len(data["source_tokens"]), len(data["decoder_tokens"])
    assert all(isinstance(t, str) for t in data["source_tokens"] + data["decoder_tokens"])
    assert len(data["steps"]) == T and (T == 0 or data["decoder_tokens"][0] == "<bos>")
    for t, step in enumerate(data["steps"]):
        assert isinstance(step["token"], str) and 0.0 <= step["prob"] <= 1.0
        assert all(isinstance(tok, str) and 0.0 <= p <= 1.0 for tok, p in step["top_k"])
        if t + 1 < T:
            assert data["decoder_tokens"][t + 1] == step["token"]
    model = data["model"]
    enc_layers, dec_layers = model["n_layers"]
    heads = model["n_heads"]
    attention = data["attention"]
    if model["arch"] == "rnn":  # GRU + Bahdanau: one additive cross-attention, no self-attention
        assert heads == 1 and attention["encoder"] == [] and attention["decoder"] == []
        enc_layers, dec_layers = 0, 1
    for name, layers, rows, cols in (
        ("encoder", enc_layers, S, S),
        ("decoder", dec_layers if model["arch"] != "rnn" else 0, T, T),
        ("cross", dec_layers, T, S),
    ):
        maps = attention[name]
        assert len(maps) == layers and all(len(layer) == heads for layer in maps)
        for layer in maps:
            for head in layer:
                assert len(head) == rows and all(len(row) == cols for row in head), name
        for row in _rows(maps):
            assert math.isclose(sum(row), 1.0, abs_tol=1e-4), name
    for layer in attention["decoder"]:
        for head in layer:
            for q, row in enumerate(head):
                assert all(w == 0.0 for w in row[q + 1 :])
