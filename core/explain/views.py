"""What the app shows, computed without Streamlit: picking attention maps out of a trace,
grouping character tokens into jieba words, and CSV export."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from core.inference.trace import Trace
from core.model.registry import ATTENTION_KINDS
from core.text.tokenize import segment_words
from core.text.vocab import SPECIALS


@dataclass
class AttentionView:
    matrix: np.ndarray  # (queries, keys)
    query_tokens: list[str]
    key_tokens: list[str]
    title: str


def layer_stack(trace: Trace, kind: str) -> np.ndarray:
    """(L, H, Tq, Tk) weights of one attention kind."""
    if kind not in ATTENTION_KINDS:
        raise ValueError(f"unknown attention kind {kind!r}; expected one of {', '.join(ATTENTION_KINDS)}")
    return getattr(trace, kind).numpy()


def axis_tokens(trace: Trace, kind: str) -> tuple[list[str], list[str]]:
    """(query tokens, key tokens) of an attention kind."""
    if kind == "encoder":
        return trace.source.tokens, trace.source.tokens
    if kind == "decoder":
        return trace.decoder_tokens, trace.decoder_tokens
    return trace.decoder_tokens, trace.source.tokens


def select(trace: Trace, kind: str, layer: int, head: int | None) -> AttentionView:
    """One layer's map for one head, or the mean over heads when head is None (layers/heads from 0)."""
    maps = layer_stack(trace, kind)
    if not 0 <= layer < maps.shape[0]:
        raise ValueError(f"layer {layer + 1} does not exist; the model has {maps.shape[0]}")
    if head is not None and not 0 <= head < maps.shape[1]:
        raise ValueError(f"head {head + 1} does not exist; the model has {maps.shape[1]}")
    matrix = maps[layer].mean(axis=0) if head is None else maps[layer, head]
    rows, cols = axis_tokens(trace, kind)
    which = "mean of heads" if head is None else f"head {head + 1}"
    return AttentionView(matrix, list(rows), list(cols), f"{ATTENTION_KINDS[kind]} · layer {layer + 1} · {which}")


def word_groups(tokens: Sequence[str]) -> list[tuple[str, list[int]]]:
    """Group consecutive Chinese character tokens into jieba words: [(word, token indices)].
    Special tokens stay on their own."""
    groups: list[tuple[str, list[int]]] = []
    run: list[int] = []

    def flush() -> None:
        if not run:
            return
        start = run[0]
        for word in segment_words("".join(tokens[i] for i in run)):
            width = _tokens_spanned(tokens, start, word)
            groups.append((word, list(range(start, start + width))))
            start += width
        run.clear()

    for index, token in enumerate(tokens):
        if token in SPECIALS:
            flush()
            groups.append((token, [index]))
        else:
            run.append(index)
    flush()
    return groups


def _tokens_spanned(tokens: Sequence[str], start: int, word: str) -> int:
    """How many tokens from `start` spell out `word` (a token may be several characters, e.g. 'iPhone')."""
    length, count = 0, 0
    while length < len(word) and start + count < len(tokens):
        length += len(tokens[start + count])
        count += 1
    return max(count, 1)


def group_view(view: AttentionView, group_rows: bool, group_cols: bool) -> AttentionView:
    """Attention between words: summed over a word's key columns (the weight a query gives the
    word), averaged over its query rows (the word's characters each attend; we show their mean)."""
    matrix, rows, cols = view.matrix, view.query_tokens, view.key_tokens
    if group_cols:
        groups = word_groups(cols)
        matrix = np.stack([matrix[:, idx].sum(axis=1) for _, idx in groups], axis=1)
        cols = [word for word, _ in groups]
    if group_rows:
        groups = word_groups(rows)
        matrix = np.stack([matrix[idx].mean(axis=0) for _, idx in groups], axis=0)
        rows = [word for word, _ in groups]
    return AttentionView(matrix, rows, cols, view.title + " · jieba words")


def to_csv(view: AttentionView) -> str:
    """The matrix with query tokens as the first column and key tokens as the header.
    Positions prefix the tokens so repeated tokens stay distinct."""
    frame = pd.DataFrame(
        view.matrix,
        index=[f"{i}:{t}" for i, t in enumerate(view.query_tokens)],
        columns=[f"{i}:{t}" for i, t in enumerate(view.key_tokens)],
    )
    frame.index.name = "query \\ key"
    buffer = io.StringIO()
    frame.to_csv(buffer, float_format="%.6f")
    return buffer.getvalue()
