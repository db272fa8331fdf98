"""The positional-encoding lab: the sinusoidal table, why PE·PEᵀ depends only on distance, how the
encoding is added to the scaled token embeddings, and what the model does without (or with shuffled)
positions: the ablation itself is an Intervention passed to the model (core.model.intervention)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from core.inference.trace import Trace, trace
from core.model.intervention import Intervention
from core.model.layers import sinusoidal_table
from core.model.transformer import Transformer
from core.text.pipeline import TextPipeline


def pe_table(d_model: int, length: int) -> np.ndarray:
    """(length, d_model) sinusoidal table, exactly as the model adds it."""
    return sinusoidal_table(length, d_model).numpy()


def wavelengths(d_model: int) -> np.ndarray:
    """Wavelength (in positions) of each dimension: 2π · 10000^(2j/d) for the pair j = dim // 2."""
    pairs = np.arange(d_model) // 2
    return 2 * math.pi * 10000.0 ** (2 * pairs / d_model)


def similarity(table: np.ndarray) -> np.ndarray:
    """PE · PEᵀ: (length, length) dot products between positions."""
    return table @ table.T


def diagonal_spread(sim: np.ndarray) -> float:
    """Largest difference between two entries on the same diagonal (same distance p - q).

    PE_p · PE_q = Σ_j cos((p - q) ω_j), so this is zero up to rounding: the similarity of two
    positions depends only on how far apart they are."""
    length = sim.shape[0]
    spreads = [np.ptp(np.diagonal(sim, offset)) for offset in range(-(length - 1), length)]
    return float(max(spreads))


def distance_profile(table: np.ndarray) -> tuple[list[int], list[float]]:
    """PE_0 · PE_k for k = 0 .. length-1: how similarity falls (non-monotonically) with distance."""
    return list(range(len(table))), (table @ table[0]).tolist()


@dataclass
class EmbeddingParts:
    """What enters the encoder for one sentence, token by token (rows = tokens)."""

    tokens: list[str]
    raw: np.ndarray  # embedding row as learned, (S, d)
    scaled: np.ndarray  # × √d_model
    positional: np.ndarray  # PE rows 0 .. S-1
    total: np.ndarray  # scaled + positional: the encoder's input

    def norms(self) -> dict[str, list[float]]:
        """L2 norm of each part per token."""
        return {
            "embedding (raw)": np.linalg.norm(self.raw, axis=1).tolist(),
            "embedding × √d_model": np.linalg.norm(self.scaled, axis=1).tolist(),
            "positional encoding": np.linalg.norm(self.positional, axis=1).tolist(),
            "sum (encoder input)": np.linalg.norm(self.total, axis=1).tolist(),
        }


@torch.no_grad()
def embedding_parts(model: Transformer, ids: list[int], tokens: list[str]) -> EmbeddingParts:
    if len(ids) != len(tokens):
        raise ValueError(f"{len(ids)} ids for {len(tokens)} tokens")
    index = torch.tensor(ids)
    raw = model.src_embed.embedding.weight[index].cpu().double().numpy()
    scaled = raw * model.src_embed.scale
    positional = model.positional.table[: len(ids)].cpu().double().numpy()
    return EmbeddingParts(list(tokens), raw, scaled, positional, scaled + positional)


def reading_order(tokens: list[str], positions: list[int]) -> list[str]:
    """The tokens sorted by the positions they were given: the sentence as the encoder 'reads' it."""
    return [token for _, token in sorted(zip(positions, tokens))]


@dataclass
class BagOfWordsCheck:
    reversed_text: str  # the source words in reverse order
    translation: str  # of the reversed words, without positions
    same: bool  # the same translation as the original words without positions


def bag_of_words_check(model: Transformer, pipeline: TextPipeline, original: Trace) -> BagOfWordsCheck:
    """Without positions the encoder reads a bag of words: translate the words reversed, also
    without positions, and compare with the original words' translation without positions."""
    removed = Intervention(source_positions="removed")
    reversed_text = " ".join(reversed(original.source.words))
    without = trace(model, pipeline, original.source.text, intervention=removed).translation
    flipped = trace(model, pipeline, reversed_text, intervention=removed).translation
    return BagOfWordsCheck(reversed_text, flipped, flipped == without)
