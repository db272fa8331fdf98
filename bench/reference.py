"""The baseline the benchmarks measure against: torch.nn.Transformer with the same configuration,
wrapped in our embeddings, positional encoding and output projection, so that only the
encoder-decoder stack differs. `from_ours` copies a trained model's weights in."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from core.model.config import ModelConfig
from core.model.layers import PositionalEncoding, TokenEmbedding
from core.model.masks import causal_mask
from core.model.transformer import Transformer
from core.text.vocab import PAD_ID


class TorchReference(nn.Module):
    """Same interface as our model's teacher-forced forward: logits (B, T, V) for src and tgt ids."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.src_embed = TokenEmbedding(config.src_vocab_size, config.d_model, PAD_ID)
        self.tgt_embed = TokenEmbedding(config.tgt_vocab_size, config.d_model, PAD_ID)
        self.positional = PositionalEncoding(config.d_model, config.max_len)
        self.dropout = nn.Dropout(config.dropout)
        self.transformer = nn.Transformer(
            config.d_model,
            config.n_heads,
            config.n_enc_layers,
            config.n_dec_layers,
            config.d_ff,
            config.dropout,
            batch_first=True,
            norm_first=config.norm_first,
        )
        if not config.norm_first:  # post-LN stacks end normalised already; ours has no extra final norm
            self.transformer.encoder.norm = None
            self.transformer.decoder.norm = None
        self.generator = None if config.tie_embeddings else nn.Linear(config.d_model, config.tgt_vocab_size)

    def encode(self, src: Tensor) -> Tensor:
        x = self.dropout(self.positional(self.src_embed(src)))
        return self.transformer.encoder(x, src_key_padding_mask=src == PAD_ID)

    def decode(self, tgt: Tensor, memory: Tensor, src: Tensor) -> Tensor:
        x = self.dropout(self.positional(self.tgt_embed(tgt)))
        hidden = self.transformer.decoder(
            x,
            memory,
            tgt_mask=~causal_mask(tgt.size(1), tgt.device)[0, 0],
            tgt_key_padding_mask=tgt == PAD_ID,
            memory_key_padding_mask=src == PAD_ID,
        )
        if self.generator is None:
            return nn.functional.linear(hidden, self.tgt_embed.weight)
        return self.generator(hidden)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        return self.decode(tgt, self.encode(src), src)


def _copy_attention(ours, theirs: nn.MultiheadAttention) -> None:
    theirs.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
    theirs.out_proj.load_state_dict(ours.out_proj.state_dict())


def _copy_ffn(ours, theirs) -> None:
    theirs.linear1.load_state_dict(ours.ffn.linear1.state_dict())
    theirs.linear2.load_state_dict(ours.ffn.linear2.state_dict())


@torch.no_grad()
def from_ours(model: Transformer) -> TorchReference:
    """A TorchReference computing the same function as `model` (same weights, same mode)."""
    reference = TorchReference(model.config).to(next(model.parameters()).device)
    reference.src_embed.load_state_dict(model.src_embed.state_dict())
    reference.tgt_embed.load_state_dict(model.tgt_embed.state_dict())
    if model.generator is not None:
        reference.generator.load_state_dict(model.generator.state_dict())
    for ours, theirs in zip(model.encoder_layers, reference.transformer.encoder.layers):
        _copy_attention(ours.self_attn, theirs.self_attn)
        _copy_ffn(ours, theirs)
        theirs.norm1.load_state_dict(ours.attn_block.norm.state_dict())
        theirs.norm2.load_state_dict(ours.ffn_block.norm.state_dict())
    for ours, theirs in zip(model.decoder_layers, reference.transformer.decoder.layers):
        _copy_attention(ours.self_attn, theirs.self_attn)
        _copy_attention(ours.cross_attn, theirs.multihead_attn)
        _copy_ffn(ours, theirs)
        theirs.norm1.load_state_dict(ours.self_block.norm.state_dict())
        theirs.norm2.load_state_dict(ours.cross_block.norm.state_dict())
        theirs.norm3.load_state_dict(ours.ffn_block.norm.state_dict())
    if model.config.norm_first:
        reference.transformer.encoder.norm.load_state_dict(model.encoder_norm.state_dict())
        reference.transformer.decoder.norm.load_state_dict(model.decoder_norm.state_dict())
    return reference.train(model.training)
