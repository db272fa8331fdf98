"""The encoder-decoder Transformer ("Attention Is All You Need"). Attention weights are returned,
never stored on modules, because one model object is shared by every user of the app."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from core.model.attention import MultiHeadAttention
from core.model.base import DecoderResult, Seq2Seq
from core.model.config import ModelConfig
from core.model.intervention import NO_INTERVENTION, Intervention, shuffled_positions
from core.model.layers import FeedForward, PositionalEncoding, Residual, TokenEmbedding
from core.model.masks import causal_mask, decoder_self_mask, padding_mask
from core.model.outputs import EncoderOutput
from core.text.vocab import PAD_ID


@dataclass
class LayerCache:
    """One decoder layer's keys/values from earlier steps; lives for one decoding call only."""

    self_kv: tuple[Tensor, Tensor] | None = None
    cross_kv: tuple[Tensor, Tensor] | None = None

    def reorder(self, index: Tensor) -> None:
        """Follow beam search's choice of parent hypotheses."""
        if self.self_kv is not None:
            self.self_kv = (self.self_kv[0][index], self.self_kv[1][index])
        if self.cross_kv is not None:
            self.cross_kv = (self.cross_kv[0][index], self.cross_kv[1][index])


class EncoderLayer(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(config.d_model, config.n_heads, config.dropout)
        self.ffn = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.attn_block = Residual(config.d_model, config.dropout, config.norm_first)
        self.ffn_block = Residual(config.d_model, config.dropout, config.norm_first)

    def forward(
        self, x: Tensor, mask: Tensor | None, need_weights: bool = False, head_mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor | None]:
        h = self.attn_block.sublayer_input(x)
        attended, weights = self.self_attn(h, h, mask, need_weights, head_mask=head_mask)
        x = self.attn_block.add(x, attended)
        x = self.ffn_block.add(x, self.ffn(self.ffn_block.sublayer_input(x)))
        return x, weights


class DecoderLayer(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.self_attn = MultiHeadAttention(config.d_model, config.n_heads, config.dropout)
        self.cross_attn = MultiHeadAttention(config.d_model, config.n_heads, config.dropout)
        self.ffn = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.self_block = Residual(config.d_model, config.dropout, config.norm_first)
        self.cross_block = Residual(config.d_model, config.dropout, config.norm_first)
        self.ffn_block = Residual(config.d_model, config.dropout, config.norm_first)

    def _self_attention(
        self, h: Tensor, mask: Tensor | None, need_weights: bool, cache: LayerCache | None, head_mask: Tensor | None
    ) -> tuple[Tensor, Tensor | None]:
        if cache is None:
            return self.self_attn(h, h, mask, need_weights, head_mask=head_mask)
        k, v = self.self_attn.project_kv(h)
        if cache.self_kv is not None:
            k = torch.cat([cache.self_kv[0], k], dim=2)
            v = torch.cat([cache.self_kv[1], v], dim=2)
        cache.self_kv = (k, v)
        return self.self_attn(h, mask=mask, need_weights=need_weights, kv=(k, v), head_mask=head_mask)

    def _cross_attention(
        self,
        h: Tensor,
        memory: Tensor,
        mask: Tensor | None,
        need_weights: bool,
        cache: LayerCache | None,
        head_mask: Tensor | None,
    ) -> tuple[Tensor, Tensor | None]:
        if cache is None:
            return self.cross_attn(h, memory, mask, need_weights, head_mask=head_mask)
        if cache.cross_kv is None:
            cache.cross_kv = self.cross_attn.project_kv(memory)
        return self.cross_attn(h, mask=mask, need_weights=need_weights, kv=cache.cross_kv, head_mask=head_mask)

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor | None,
        cross_mask: Tensor | None,
        need_weights: bool = False,
        cache: LayerCache | None = None,
        head_masks: tuple[Tensor | None, Tensor | None] = (None, None),
    ) -> tuple[Tensor, Tensor | None, Tensor | None]:
        """With a cache, x holds only the new positions; earlier keys/values come from the cache.
        head_masks: (self-attention, cross-attention) head masks (see MultiHeadAttention)."""
        h = self.self_block.sublayer_input(x)
        attended, self_w = self._self_attention(h, self_mask, need_weights, cache, head_masks[0])
        x = self.self_block.add(x, attended)
        h = self.cross_block.sublayer_input(x)
        attended, cross_w = self._cross_attention(h, memory, cross_mask, need_weights, cache, head_masks[1])
        x = self.cross_block.add(x, attended)
        x = self.ffn_block.add(x, self.ffn(self.ffn_block.sublayer_input(x)))
        return x, self_w, cross_w


class Transformer(Seq2Seq):
    """English -> Chinese encoder-decoder Transformer."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        config.validate()
        self.config = config
        self.src_embed = TokenEmbedding(config.src_vocab_size, config.d_model, PAD_ID)
        self.tgt_embed = TokenEmbedding(config.tgt_vocab_size, config.d_model, PAD_ID)
        self.positional = PositionalEncoding(config.d_model, config.max_len)
        self.dropout = nn.Dropout(config.dropout)
        self.encoder_layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_enc_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.n_dec_layers))
        # Pre-LN stacks need a final norm; post-LN outputs are already normalised.
        self.encoder_norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(config.d_model) if config.norm_first else nn.Identity()
        self.generator = None if config.tie_embeddings else nn.Linear(config.d_model, config.tgt_vocab_size)
        self._init_linear_weights()

    def _init_linear_weights(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)

    def embed_source(
        self, src: Tensor, intervention: Intervention = NO_INTERVENTION, token_embeddings: Tensor | None = None
    ) -> Tensor:
        """The encoder's input (B, S, d): scaled embeddings (or the given ones) plus positions, or,
        under a position intervention, without positions or with the positions of a fixed shuffle."""
        embedded = self.src_embed(src) if token_embeddings is None else token_embeddings
        mode = intervention.source_positions
        if mode == "normal":
            return self.positional(embedded)
        if mode == "removed":
            return embedded
        order = torch.tensor(shuffled_positions(src.size(1)), device=src.device)
        return embedded + self.positional.table[order]

    def encode(
        self,
        src: Tensor,
        return_attention: bool = False,
        intervention: Intervention = NO_INTERVENTION,
        token_embeddings: Tensor | None = None,
    ) -> EncoderOutput:
        src_mask = padding_mask(src, PAD_ID)
        x = self.dropout(self.embed_source(src, intervention, token_embeddings))
        weights = []
        heads = self.config.n_heads
        for i, layer in enumerate(self.encoder_layers):
            x, w = layer(x, src_mask, return_attention, intervention.head_mask("encoder", i, heads, src.device))
            weights.append(w)
        return EncoderOutput(self.encoder_norm(x), src_mask, weights if return_attention else None)

    def decode(
        self,
        tgt: Tensor,
        encoded: EncoderOutput,
        return_attention: bool = False,
        cache: list[LayerCache] | None = None,
        offset: int = 0,
        intervention: Intervention = NO_INTERVENTION,
        token_embeddings: Tensor | None = None,
        layer_states: list[Tensor] | None = None,
    ) -> DecoderResult:
        if cache is None:
            self_mask = decoder_self_mask(tgt, PAD_ID)
        elif tgt.size(1) == 1:
            self_mask = None  # one new position may see every cached one: no mask is the same, and faster
        else:
            self_mask = causal_mask(tgt.size(1), tgt.device, offset)
        embedded = self.tgt_embed(tgt) if token_embeddings is None else token_embeddings
        x = self.dropout(self.positional(embedded, offset))
        self_ws, cross_ws = [], []
        heads = self.config.n_heads
        for i, layer in enumerate(self.decoder_layers):
            layer_cache = cache[i] if cache is not None else None
            masks = tuple(intervention.head_mask(kind, i, heads, tgt.device) for kind in ("decoder", "cross"))
            x, self_w, cross_w = layer(
                x, encoded.memory, self_mask, encoded.src_mask, return_attention, layer_cache, masks
            )
            self_ws.append(self_w)
            cross_ws.append(cross_w)
            if layer_states is not None:
                layer_states.append(x)
        logits = self.readout(x)
        if not return_attention:
            return logits, None, None
        return logits, self_ws, cross_ws

    def readout(self, hidden: Tensor) -> Tensor:
        """A decoder state -> vocabulary logits: the final norm (pre-LN only), then the output
        projection. The logit lens applies it to every layer's output."""
        return self.project(self.decoder_norm(hidden))

    def new_cache(self) -> list[LayerCache]:
        return [LayerCache() for _ in self.decoder_layers]
