"""The Transformer's predecessor: a GRU encoder-decoder with Bahdanau (additive) attention.

It is a core.model.base.Seq2Seq like the Transformer, so training, decoding, traces, checkpoints
and the app take either model.
For arch="rnn" the config means: d_model = embedding and GRU width (the bidirectional encoder
has d_model/2 per direction), n_enc_layers / n_dec_layers = GRU layers; n_heads, d_ff and
norm_first are unused. Its only attention is cross-attention: one "layer" with one "head".
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from core.model.attention import AdditiveAttention
from core.model.base import DecoderResult, Seq2Seq
from core.model.config import ModelConfig
from core.model.intervention import NO_INTERVENTION, Intervention
from core.model.masks import padding_mask
from core.model.outputs import EncoderOutput
from core.text.vocab import PAD_ID


@dataclass
class RNNState:
    """The decoder's GRU state and the projected source keys; lives for one decoding call."""

    hidden: Tensor | None = None  # (layers, B, d)
    keys: Tensor | None = None  # (B, S, d): W_h h, fixed for the sentence

    def reorder(self, index: Tensor) -> None:
        """Follow beam search's choice of parent hypotheses."""
        if self.hidden is not None:
            self.hidden, self.keys = self.hidden[:, index], self.keys[index]


class BahdanauSeq2Seq(Seq2Seq):
    """English -> Chinese GRU encoder-decoder with additive attention (Bahdanau et al., 2015)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        config.validate()
        if config.d_model % 2:
            raise ValueError(f"d_model={config.d_model} must be even (two encoder directions)")
        self.config = config
        d = config.d_model
        self.src_embed = nn.Embedding(config.src_vocab_size, d, padding_idx=PAD_ID)
        self.tgt_embed = nn.Embedding(config.tgt_vocab_size, d, padding_idx=PAD_ID)
        for embedding in (self.src_embed, self.tgt_embed):
            nn.init.normal_(embedding.weight, std=d**-0.5)
            with torch.no_grad():
                embedding.weight[PAD_ID].zero_()
        gru_dropout = lambda layers: config.dropout if layers > 1 else 0.0
        self.encoder = nn.GRU(
            d,
            d // 2,
            config.n_enc_layers,
            batch_first=True,
            bidirectional=True,
            dropout=gru_dropout(config.n_enc_layers),
        )
        self.init_state = nn.Linear(d, d * config.n_dec_layers)
        self.attention = AdditiveAttention(d, d, d)
        self.decoder = nn.GRU(2 * d, d, config.n_dec_layers, batch_first=True, dropout=gru_dropout(config.n_dec_layers))
        self.pre_output = nn.Linear(3 * d, d)  # [state; context; previous token] -> output vector
        self.dropout = nn.Dropout(config.dropout)
        self.generator = None if config.tie_embeddings else nn.Linear(d, config.tgt_vocab_size)

    def encode(
        self,
        src: Tensor,
        return_attention: bool = False,
        intervention: Intervention = NO_INTERVENTION,
        token_embeddings: Tensor | None = None,
    ) -> EncoderOutput:
        """src (B, S) padded ids -> memory (B, S, d); padding never enters the GRU (packed)."""
        if intervention.source_positions != "normal":
            raise ValueError("the GRU model reads its source in order: it has no positions to intervene on")
        mask = padding_mask(src, PAD_ID)
        lengths = (src != PAD_ID).sum(dim=1).clamp(min=1).cpu()
        embedded = self.dropout(self.src_embed(src) if token_embeddings is None else token_embeddings)
        packed = pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
        memory, _ = pad_packed_sequence(self.encoder(packed)[0], batch_first=True, total_length=src.size(1))
        return EncoderOutput(memory, mask, [] if return_attention else None)

    def _initial_state(self, encoded: EncoderOutput) -> RNNState:
        real = encoded.src_mask[:, 0, 0, :, None].float()
        mean = (encoded.memory * real).sum(1) / real.sum(1).clamp(min=1.0)
        batch, layers = mean.size(0), self.config.n_dec_layers
        hidden = torch.tanh(self.init_state(mean)).view(batch, layers, -1).transpose(0, 1).contiguous()
        return RNNState(hidden, self.attention.project_keys(encoded.memory))

    def decode(
        self,
        tgt: Tensor,
        encoded: EncoderOutput,
        return_attention: bool = False,
        cache: list[RNNState] | None = None,
        offset: int = 0,
        intervention: Intervention = NO_INTERVENTION,
        token_embeddings: Tensor | None = None,
        layer_states: list[Tensor] | None = None,
    ) -> DecoderResult:
        """With a cache, continue from its state (offset is implied by the state and unused).
        layer_states is left empty: a GRU's layers have no readout to read a logit lens through.
        No self-attention (an empty list); cross-attention comes back as [(B, 1, T, S)]. Ablating
        its one head (cross:1:1) sets the attention's context vector to zero."""
        state = cache[0] if cache is not None else RNNState()
        if state.hidden is None:
            fresh = self._initial_state(encoded)
            state.hidden, state.keys = fresh.hidden, fresh.keys
        mask = encoded.src_mask[:, 0, 0, :]
        context_mask = intervention.head_mask("cross", 0, 1, tgt.device)
        embedded = self.dropout(self.tgt_embed(tgt) if token_embeddings is None else token_embeddings)
        hidden, outputs, weights = state.hidden, [], []
        for t in range(tgt.size(1)):
            context, w = self.attention(hidden[-1], state.keys, encoded.memory, mask)
            if context_mask is not None:
                context = context * context_mask
            output, hidden = self.decoder(torch.cat([embedded[:, t], context], dim=-1)[:, None], hidden)
            outputs.append(torch.tanh(self.pre_output(torch.cat([output[:, 0], context, embedded[:, t]], dim=-1))))
            weights.append(w)
        if cache is not None:
            state.hidden = hidden
        logits = self.project(self.dropout(torch.stack(outputs, dim=1)))
        if not return_attention:
            return logits, None, None
        return logits, [], [torch.stack(weights, dim=1)[:, None]]

    def new_cache(self) -> list[RNNState]:
        return [RNNState()]
