"""The step-by-step trace of greedy decoding: every token's probability and candidates, and every
attention weight the model used to choose it (DESIGN.md's trace schema)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from core.inference.source import Source, max_steps, model_device, prepare_source
from core.model.base import Seq2Seq
from core.model.intervention import NO_INTERVENTION, Intervention
from core.model.registry import spec_for
from core.text.pipeline import TextPipeline
from core.text.tokenize import output_text
from core.text.vocab import BOS_ID, EOS_ID, UNK_ID


@dataclass
class Step:
    token: str  # chosen at this query position
    prob: float
    top_k: list[tuple[str, float]]
    forced: bool = False  # chosen by the user (a branch), not by argmax


@dataclass
class Trace:
    """Everything one greedy decoding did: tokens, probabilities, and all attention weights.
    A kind of attention the architecture lacks has 0 layers."""

    source: Source
    decoder_tokens: list[str]  # <bos>, then every generated token except the last
    translation: str
    steps: list[Step]
    encoder: Tensor  # (L, H, S, S)
    decoder: Tensor  # (L, H, T, T), zero above the diagonal
    cross: Tensor  # (L, H, T, S)
    model_info: dict[str, Any]
    ablated: list[str] = field(default_factory=list)  # heads switched off, kind:layer:head (1-based)
    # each decoder layer's output at each step (L, T, d), for the logit lens: kept only when asked
    # (it is the trace's largest part after the attention); None for the GRU, which has no readout
    layer_states: Tensor | None = None

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
            **({"ablated": self.ablated} if self.ablated else {}),
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
    intervention: Intervention = NO_INTERVENTION,
    keep_layer_states: bool = False,
) -> Trace:
    """Greedy decoding of one sentence, one cached step at a time, keeping every attention weight
    (and, with keep_layer_states, every decoder layer's output, for the logit lens).

    `forced` tokens are taken at the first steps instead of the argmax (a user's branch);
    decoding then continues greedily. The weights are those of the steps that chose the tokens.
    `intervention` changes the forward pass (e.g. the positional-encoding ablation).
    """
    source = prepare_source(model, pipeline, text)
    device = model_device(model)
    vocab = pipeline.tgt_vocab
    encoded = model.encode(torch.tensor([source.ids], device=device), True, intervention)
    cache = model.new_cache()
    decoder_ids = [BOS_ID]
    steps: list[Step] = []
    self_rows: list[Tensor] = []  # per step: (L, H, t+1)
    cross_rows: list[Tensor] = []  # per step: (L, H, S)
    state_rows: list[Tensor] = []  # per step: (L, d)
    limit = min(model.config.max_len, max(max_steps(model, len(source.ids)), len(forced) + 1))
    for step in range(limit):
        last = torch.tensor([[decoder_ids[-1]]], device=device)
        states: list[Tensor] | None = [] if keep_layer_states else None
        logits, self_ws, cross_ws = model.decode(last, encoded, True, cache, step, intervention, layer_states=states)
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
        if self_ws:
            self_rows.append(torch.stack([w[0, :, 0] for w in self_ws]))
        cross_rows.append(torch.stack([w[0, :, 0] for w in cross_ws]))
        if states:
            state_rows.append(torch.stack([s[0, 0] for s in states]))
        if chosen == EOS_ID:
            break
        decoder_ids.append(chosen)
    length, src_len, heads = len(steps), len(source.ids), model.config.n_heads
    decoder = torch.zeros(len(self_rows[0]) if self_rows else 0, heads, length, length)
    for t, row in enumerate(self_rows):
        decoder[:, :, t, : t + 1] = row.cpu()
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
        ablated=intervention.ablated_specs(),
        layer_states=torch.stack(state_rows, dim=1).cpu() if state_rows else None,
    )


def empty_trace_json(
    model: Seq2Seq, pipeline: TextPipeline, text: str, intervention: Intervention = NO_INTERVENTION
) -> dict[str, Any]:
    """A schema-valid trace with no tokens, for a line with nothing to translate."""
    c = model.config
    layers = spec_for(c.arch).attention_layers(c.n_enc_layers, c.n_dec_layers)
    return {
        "source": text,
        "source_tokens": [],
        "decoder_tokens": [],
        "translation": "",
        "steps": [],
        "attention": {kind: [[[] for _ in range(c.n_heads)] for _ in range(n)] for kind, n in layers.items()},
        **({"ablated": intervention.ablated_specs()} if intervention.ablated_heads else {}),
        "model": model_info(model, pipeline),
    }
