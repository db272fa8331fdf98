"""Greedy decoding (batched, KV-cached), the step-by-step trace, beam search and forced prefixes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from core.architectures import Seq2Seq
from core.data import pad_batch
from core.positional import encoder_input
from core.text import BOS_ID, EOS_ID, UNK_ID, TextPipeline, output_text

MAX_SOURCE_TOKENS = 100  # longer inputs are cut (with a notice): attention maps stay readable


class EmptyInputError(ValueError):
    """The text has nothing to translate."""


@dataclass
class Source:
    text: str
    words: list[str]  # the English tokens as typed (after any cut)
    tokens: list[str]  # encoder input as the model sees it: unknown words as <unk>, then <eos>
    ids: list[int]
    notices: list[str] = field(default_factory=list)

    @property
    def unknown_words(self) -> list[str]:
        return [word for word, i in zip(self.words, self.ids) if i == UNK_ID]


def prepare_source(model: Seq2Seq, pipeline: TextPipeline, text: str) -> Source:
    """Tokenize English text; raise EmptyInputError if nothing is left; cut over-long input."""
    words = pipeline.source_tokens(text or "")
    if not words:
        raise EmptyInputError("There is nothing to translate: type an English sentence.")
    notices = []
    limit = min(MAX_SOURCE_TOKENS, model.config.max_len - 1)
    if len(words) > limit:
        notices.append(f"The input has {len(words)} tokens; only the first {limit} were translated.")
        words = words[:limit]
    ids = pipeline.source_ids(words)
    source = Source(text, words, pipeline.src_vocab.decode(ids, strip_specials=False), ids, notices)
    if source.unknown_words:
        shown = (word if len(word) <= 40 else word[:40] + "…" for word in source.unknown_words[:10])
        notices.append(f"Not in the vocabulary (shown as <unk>): {', '.join(shown)}")
    return source


def max_steps(model: Seq2Seq, source_len: int) -> int:
    """Output bound: Chinese runs about 1.4 characters per English word; leave generous room."""
    return min(model.config.max_len, 2 * source_len + 10)


@torch.no_grad()
def greedy_ids(model: Seq2Seq, sources: Sequence[Sequence[int]]) -> list[list[int]]:
    """Batched greedy decoding with the KV cache; returns generated ids without <bos>/<eos>."""
    src = pad_batch(sources).to(_device(model))
    encoded = model.encode(src)
    cache = model.new_cache()
    batch = src.size(0)
    last = torch.full((batch, 1), BOS_ID, dtype=torch.long, device=src.device)
    limits = torch.tensor([max_steps(model, len(s)) for s in sources], device=src.device)
    finished = torch.zeros(batch, dtype=torch.bool, device=src.device)
    generated = []
    for step in range(int(limits.max())):
        logits, _, _ = model.decode(last, encoded, cache=cache, offset=step)
        last = logits[:, -1].argmax(-1, keepdim=True)
        generated.append(last)
        finished |= (last.squeeze(1) == EOS_ID) | (step + 1 >= limits)
        if bool(finished.all()):
            break
    rows = torch.cat(generated, dim=1).tolist()
    out = []
    for row, limit in zip(rows, limits.tolist()):
        row = row[:limit]
        out.append(row[: row.index(EOS_ID)] if EOS_ID in row else row)
    return out


def _device(model: Seq2Seq) -> torch.device:
    return next(model.parameters()).device


@dataclass
class Step:
    token: str  # chosen at this query position
    prob: float
    top_k: list[tuple[str, float]]
    forced: bool = False  # chosen by the user (a branch), not by argmax


@dataclass
class Trace:
    """Everything one greedy decoding did: tokens, probabilities, and all attention weights."""

    source: Source
    decoder_tokens: list[str]  # <bos>, then every generated token except the last
    translation: str
    steps: list[Step]
    encoder: Tensor  # (L, H, S, S)
    decoder: Tensor  # (L, H, T, T), zero above the diagonal
    cross: Tensor  # (L, H, T, S)
    model_info: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The DESIGN.md trace schema."""
        return {
            "source": self.source.text,
            "source_tokens": self.source.tokens,
            "decoder_tokens": self.decoder_tokens,
            "translation": self.translation,
            "steps": [{"token": s.token, "prob": s.prob, "top_k": [[t, p] for t, p in s.top_k]} for s in self.steps],
            "attention": {
                "encoder": self.encoder.tolist(),
                "decoder": self.decoder.tolist(),
                "cross": self.cross.tolist(),
            },
            "model": self.model_info,
        }


def model_info(model: Seq2Seq, pipeline: TextPipeline) -> dict[str, Any]:
    c = model.config
    return {
        "arch": c.arch,
        "d_model": c.d_model,
        "n_heads": c.n_heads,
        "n_layers": [c.n_enc_layers, c.n_dec_layers],
        "d_ff": c.d_ff,
        "norm_first": c.norm_first,
        "src_vocab_size": c.src_vocab_size,
        "tgt_vocab_size": c.tgt_vocab_size,
        "tgt_tokenizer": pipeline.zh_tokenizer,
    }


@torch.no_grad()
def trace(
    model: Seq2Seq,
    pipeline: TextPipeline,
    text: str,
    forced: Sequence[str] = (),
    top_k: int = 5,
    source_positions: str = "normal",
) -> Trace:
    """Greedy decoding of one sentence, one cached step at a time, keeping every attention weight.

    `forced` tokens are taken at the first steps instead of the argmax (a user's branch);
    decoding then continues greedily. The weights are those of the steps that chose the tokens.
    `source_positions` other than "normal" is the positional-encoding ablation (core.positional).
    """
    source = prepare_source(model, pipeline, text)
    device = _device(model)
    vocab = pipeline.tgt_vocab
    src = torch.tensor([source.ids], device=device)
    if source_positions == "normal":
        encoded = model.encode(src, return_attention=True)
    else:
        encoded = model.encode(src, return_attention=True, embedded=encoder_input(model, src, source_positions))
    cache = model.new_cache()
    decoder_ids = [BOS_ID]
    steps: list[Step] = []
    self_rows: list[Tensor] = []  # per step: (L, H, t+1)
    cross_rows: list[Tensor] = []  # per step: (L, H, S)
    limit = min(model.config.max_len, max(max_steps(model, len(source.ids)), len(forced) + 1))
    for step in range(limit):
        last = torch.tensor([[decoder_ids[-1]]], device=device)
        logits, self_ws, cross_ws = model.decode(last, encoded, True, cache, step)
        probs = torch.softmax(logits[0, -1].float(), dim=-1)
        top_p, top_i = probs.topk(min(top_k, probs.numel()))
        is_forced = step < len(forced)
        chosen = vocab.stoi.get(forced[step], UNK_ID) if is_forced else int(top_i[0])
        steps.append(
            Step(
                vocab.itos[chosen],
                float(probs[chosen]),
                [(vocab.itos[i], float(p)) for p, i in zip(top_p.tolist(), top_i.tolist())],
                is_forced,
            )
        )
        if self_ws is not None:  # the GRU model has no self-attention
            self_rows.append(torch.stack([w[0, :, 0] for w in self_ws]))
        cross_rows.append(torch.stack([w[0, :, 0] for w in cross_ws]))
        if chosen == EOS_ID:
            break
        decoder_ids.append(chosen)
    length = len(steps)
    heads = model.config.n_heads
    decoder = torch.zeros(len(self_rows[0]) if self_rows else 0, heads, length, length)
    for t, row in enumerate(self_rows):
        decoder[:, :, t, : t + 1] = row.cpu()
    src_len = len(source.ids)
    encoder = (
        torch.stack([w[0] for w in encoded.attention]) if encoded.attention else torch.zeros(0, heads, src_len, src_len)
    )
    return Trace(
        source=source,
        decoder_tokens=[vocab.itos[i] for i in decoder_ids[:length]],
        translation=output_text(s.token for s in steps),
        steps=steps,
        encoder=encoder.cpu(),
        decoder=decoder,
        cross=torch.stack(cross_rows, dim=2).cpu(),
        model_info=model_info(model, pipeline),
    )


def _length_penalty(length: int, alpha: float) -> float:
    """GNMT length normalisation: ((5 + length) / 6) ** alpha."""
    return ((5 + length) / 6) ** alpha


@torch.no_grad()
def beam_search_ids(model: Seq2Seq, source_ids: Sequence[int], beam_size: int = 4, alpha: float = 0.6) -> list[int]:
    """Beam search for one sentence; finished hypotheses are ranked by log-prob / length penalty.

    Stops once beam_size hypotheses have ended in <eos>; with beam_size=1 this is greedy decoding.
    """
    if beam_size < 1:
        raise ValueError("beam size must be at least 1")
    device = _device(model)
    encoded = model.encode(torch.tensor([list(source_ids)], device=device))
    cache = model.new_cache()
    alive: list[tuple[float, list[int]]] = [(0.0, [])]
    finished: list[tuple[float, list[int]]] = []
    limit = max_steps(model, len(source_ids))
    for step in range(limit):
        count = len(alive)
        memory = type(encoded)(encoded.memory.expand(count, -1, -1), encoded.src_mask.expand(count, -1, -1, -1), None)
        last = torch.tensor([[seq[-1] if seq else BOS_ID] for _, seq in alive], device=device)
        logits, _, _ = model.decode(last, memory, cache=cache, offset=step)
        log_probs = torch.log_softmax(logits[:, -1].float(), dim=-1)
        totals = torch.tensor([score for score, _ in alive], device=device)[:, None] + log_probs
        values, flat = totals.flatten().topk(min(2 * beam_size, totals.numel()))
        next_alive, parents = [], []
        for value, index in zip(values.tolist(), flat.tolist()):
            parent, token = divmod(index, log_probs.size(1))
            sequence = alive[parent][1] + [token]
            if token == EOS_ID or step + 1 == limit:
                finished.append((value / _length_penalty(len(sequence), alpha), sequence))
            else:
                next_alive.append((value, sequence))
                parents.append(parent)
            if len(next_alive) == beam_size:
                break
        if len(finished) >= beam_size or not next_alive:
            break
        alive = next_alive
        for layer in cache:
            layer.reorder(torch.tensor(parents, device=device))
    best = max(finished or [(s / _length_penalty(len(q), alpha), q) for s, q in alive], key=lambda item: item[0])[1]
    return [t for t in best if t != EOS_ID]


@dataclass
class Translation:
    text: str
    notices: list[str]


def translate(
    model: Seq2Seq, pipeline: TextPipeline, texts: Sequence[str], beam_size: int = 1, batch_size: int = 64
) -> list[Translation]:
    """Translate many sentences; empty ones give "" with a notice, never an exception."""
    results: list[Translation | None] = [None] * len(texts)
    prepared: list[tuple[int, Source]] = []
    for i, text in enumerate(texts):
        try:
            prepared.append((i, prepare_source(model, pipeline, text)))
        except EmptyInputError as err:
            results[i] = Translation("", [str(err)])
    prepared.sort(key=lambda item: len(item[1].ids))  # similar lengths share a batch
    for start in range(0, len(prepared), batch_size):
        chunk = prepared[start : start + batch_size]
        if beam_size == 1:
            outputs = greedy_ids(model, [s.ids for _, s in chunk])
        else:
            outputs = [beam_search_ids(model, s.ids, beam_size) for _, s in chunk]
        for (i, source), ids in zip(chunk, outputs):
            results[i] = Translation(output_text(pipeline.tgt_vocab.decode(ids)), source.notices)
    return [r for r in results if r is not None]
