"""What every architecture provides, so training, decoding, traces, checkpoints and the app take
any of them: encode, decode with a cache, project, a teacher-forced forward, optimizer groups."""

from __future__ import annotations

from typing import Any

import torch.nn.functional as F
from torch import Tensor, nn

from core.model.config import ModelConfig
from core.model.intervention import NO_INTERVENTION, Intervention
from core.model.outputs import AttentionMaps, EncoderOutput, Seq2SeqOutput

DecoderResult = tuple[Tensor, list[Tensor] | None, list[Tensor] | None]  # logits, self- and cross-attention


class Seq2Seq(nn.Module):
    """An encoder-decoder. Subclasses define the modules `tgt_embed` (whose weight is the tied output
    projection) and `generator` (None when tied), and the methods below that raise."""

    config: ModelConfig
    tgt_embed: nn.Module
    generator: nn.Linear | None

    def encode(
        self,
        src: Tensor,
        return_attention: bool = False,
        intervention: Intervention = NO_INTERVENTION,
        token_embeddings: Tensor | None = None,
    ) -> EncoderOutput:
        """src (B, S) ids padded with <pad> -> memory (B, S, d).

        token_embeddings (B, S, d): used instead of looking src up in the embedding table (gradient
        attribution feeds scaled or interpolated embeddings); src still gives the padding mask."""
        raise NotImplementedError

    def decode(
        self,
        tgt: Tensor,
        encoded: EncoderOutput,
        return_attention: bool = False,
        cache: list[Any] | None = None,
        offset: int = 0,
        intervention: Intervention = NO_INTERVENTION,
        token_embeddings: Tensor | None = None,
        layer_states: list[Tensor] | None = None,
    ) -> DecoderResult:
        """Logits (B, T, V) for decoder input tgt (B, T) and, if asked, per-layer attention weights.
        The intervention must be the one given to `encode` (and the same at every cached step).

        Full pass: cache=None, offset=0, tgt may be padded. Incremental: pass the cache from
        new_cache(); tgt holds the T new positions starting at `offset` (no padding).
        token_embeddings: as for `encode`, for tgt. layer_states: a list the call appends each
        decoder layer's output (B, T, d) to, for the logit lens (architectures with `readout`)."""
        raise NotImplementedError

    def new_cache(self) -> list[Any]:
        """Per-call decoding state (keys/values or recurrent state); each entry can `reorder(index)`."""
        raise NotImplementedError

    def project(self, hidden: Tensor) -> Tensor:
        """Decoder states -> vocabulary logits (tied to the target embedding unless configured off)."""
        if self.generator is None:
            return F.linear(hidden, self.tgt_embed.weight)
        return self.generator(hidden)

    def forward(
        self, src: Tensor, tgt: Tensor, return_attention: bool = False, intervention: Intervention = NO_INTERVENTION
    ) -> Seq2SeqOutput:
        """Teacher-forced pass: src (B, S), tgt (B, T) decoder input (starts with <bos>)."""
        encoded = self.encode(src, return_attention, intervention)
        logits, self_ws, cross_ws = self.decode(tgt, encoded, return_attention, intervention=intervention)
        if not return_attention:
            return Seq2SeqOutput(logits, None)
        return Seq2SeqOutput(logits, AttentionMaps(encoded.attention or [], self_ws or [], cross_ws or []))

    def optimizer_groups(self, weight_decay: float) -> list[dict[str, Any]]:
        """AdamW parameter groups (as nanoGPT's configure_optimizers): weight matrices decay;
        embedding tables, biases and norm gains do not."""
        embeddings = {id(m.weight) for m in self.modules() if isinstance(m, nn.Embedding)}
        decays = [p.dim() >= 2 and id(p) not in embeddings for p in self.parameters()]
        return [
            {"params": [p for p, d in zip(self.parameters(), decays) if d], "weight_decay": weight_decay},
            {"params": [p for p, d in zip(self.parameters(), decays) if not d], "weight_decay": 0.0},
        ]
