"""The mask lab: a real padded batch of two sentences, its four masks, and one head's attention
pipeline QKᵀ → ÷√d_k → masked → softmax from the model's own tensors, including what goes wrong
when masked scores are filled with 0 or a small number instead of -inf. No Streamlit here."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from core.inference.greedy import greedy_ids
from core.inference.source import prepare_source
from core.model.masks import decoder_self_mask, padding_mask
from core.model.transformer import Transformer
from core.text.batches import pad_batch
from core.text.pipeline import TextPipeline
from core.text.vocab import BOS_ID, PAD_ID

SHORT_PARTNER = "Hi."
LONG_PARTNER = "She has lived in this small town for ten years."  # 12 source tokens with <eos>
WRONG_FILLS = {"0": 0.0, "1e-6 (the seeds' bug)": 1e-6}
MASK_NAMES = {
    "encoder": "encoder self-attention: key padding",
    "causal": "decoder: causal (no looking ahead)",
    "decoder": "decoder self-attention: causal AND key padding",
    "cross": "cross-attention: source key padding",
}


def partner_sentence(source_length: int) -> str:
    """A second sentence of a different length (in source tokens), so one of the two rows is padded."""
    return LONG_PARTNER if source_length < 12 else SHORT_PARTNER


@dataclass
class MaskBatch:
    """Two sentences batched as in training: sources and decoder inputs padded with <pad>."""

    sentences: list[str]
    src: Tensor  # (2, S)
    tgt: Tensor  # (2, T): <bos> + the model's own greedy output (teacher forcing on it)
    src_tokens: list[list[str]]  # with <pad>
    tgt_tokens: list[list[str]]

    @property
    def has_padding(self) -> bool:
        return bool((self.src == PAD_ID).any() or (self.tgt == PAD_ID).any())

    def masks(self, row: int) -> dict[str, np.ndarray]:
        """The four masks of one batch row as (queries, keys) booleans, True = may attend."""
        src_keys = padding_mask(self.src)[row, 0, 0]
        length = self.tgt.size(1)
        causal = torch.ones(length, length).tril().bool()
        return {
            "encoder": src_keys.expand(self.src.size(1), -1).numpy(),
            "causal": causal.numpy(),
            "decoder": decoder_self_mask(self.tgt)[row, 0].numpy(),
            "cross": src_keys.expand(length, -1).numpy(),
        }

    def padding_rows(self) -> np.ndarray:
        """(2, S) source padding mask of the whole batch: True = real token."""
        return padding_mask(self.src)[:, 0, 0].numpy()

    def axes(self, kind: str, row: int) -> tuple[list[str], list[str]]:
        """(query tokens, key tokens) of a mask or attention kind for one row."""
        src, tgt = self.src_tokens[row], self.tgt_tokens[row]
        return {"encoder": (src, src), "causal": (tgt, tgt), "decoder": (tgt, tgt), "cross": (tgt, src)}[kind]


@torch.no_grad()
def build_batch(model: Transformer, pipeline: TextPipeline, sentences: list[str]) -> MaskBatch:
    """Batch the sentences; each decoder input is <bos> + the model's greedy translation."""
    sources = [prepare_source(model, pipeline, text) for text in sentences]
    outputs = greedy_ids(model, [s.ids for s in sources])
    src = pad_batch([s.ids for s in sources])
    tgt = pad_batch([[BOS_ID, *ids] for ids in outputs])
    decode = lambda vocab, rows: [vocab.decode(r, strip_specials=False) for r in rows.tolist()]
    return MaskBatch(list(sentences), src, tgt, decode(pipeline.src_vocab, src), decode(pipeline.tgt_vocab, tgt))


@dataclass
class ScorePipeline:
    """One head's attention for one batch row, stage by stage; each array is (queries, keys)."""

    raw: np.ndarray  # Q Kᵀ
    scaled: np.ndarray  # ÷ √d_k
    mask: np.ndarray  # True = may attend
    masked: np.ndarray  # disallowed cells = -inf
    weights: np.ndarray  # softmax over keys (rows of fully masked queries are 0)
    wrong: dict[str, np.ndarray]  # softmax after filling disallowed cells with a wrong value
    d_k: int

    def leaked_mass(self, weights: np.ndarray) -> np.ndarray:
        """Per query, the attention weight that lands on keys it must not see."""
        return np.where(self.mask, 0.0, weights).sum(axis=1)

    def fills(self) -> dict[str, np.ndarray]:
        """The weights with the correct fill (−∞) and with each wrong one, by label."""
        return {"−∞ (correct)": self.weights, **self.wrong}

    def max_leaks(self) -> dict[str, float]:
        """For each fill, the largest share of one query's attention on keys it must not see."""
        return {label: float(self.leaked_mass(w).max(initial=0.0)) for label, w in self.fills().items()}


def _attention_inputs(model: Transformer, batch: MaskBatch, kind: str, layer: int):
    """The chosen layer's attention module with its query and key inputs, recomputed from the batch
    (the model keeps nothing on its modules, so the lab runs the stack up to that layer itself)."""
    src_mask = padding_mask(batch.src)
    if kind == "encoder":
        x = model.positional(model.src_embed(batch.src))
        for encoder_layer in model.encoder_layers[:layer]:
            x, _ = encoder_layer(x, src_mask)
        block = model.encoder_layers[layer]
        h = block.attn_block.sublayer_input(x)
        return block.self_attn, h, h, src_mask
    memory = model.encode(batch.src).memory
    self_mask = decoder_self_mask(batch.tgt)
    y = model.positional(model.tgt_embed(batch.tgt))
    for decoder_layer in model.decoder_layers[:layer]:
        y, _, _ = decoder_layer(y, memory, self_mask, src_mask)
    block = model.decoder_layers[layer]
    h = block.self_block.sublayer_input(y)
    if kind == "decoder":
        return block.self_attn, h, h, self_mask
    y = block.self_block.add(y, block.self_attn(h, h, self_mask)[0])
    return block.cross_attn, block.cross_block.sublayer_input(y), memory, src_mask


@torch.no_grad()
def score_pipeline(model: Transformer, batch: MaskBatch, kind: str, layer: int, head: int, row: int) -> ScorePipeline:
    """kind: encoder / decoder / cross; layer, head, row from 0."""
    if kind not in ("encoder", "decoder", "cross"):
        raise ValueError(f"unknown attention kind {kind!r}")
    n_layers = len(model.encoder_layers if kind == "encoder" else model.decoder_layers)
    if not (0 <= layer < n_layers and 0 <= head < model.config.n_heads and 0 <= row < batch.src.size(0)):
        raise ValueError(f"layer {layer}, head {head} or row {row} is out of range")
    attention, query, key_value, mask = _attention_inputs(model, batch, kind, layer)
    raw = attention.scores(query, key_value)[row, head].double()
    d_k = model.config.head_dim
    scaled = raw / math.sqrt(d_k)
    allowed = mask[row, 0].expand_as(scaled)
    masked = scaled.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(masked, dim=-1).nan_to_num(0.0)  # a fully masked row attends to nothing
    wrong = {
        label: torch.softmax(scaled.masked_fill(~allowed, value), dim=-1).numpy()
        for label, value in WRONG_FILLS.items()
    }
    return ScorePipeline(raw.numpy(), scaled.numpy(), allowed.numpy(), masked.numpy(), weights.numpy(), wrong, d_k)
