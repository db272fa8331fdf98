"""Preparing an English text for the encoder: tokens, ids, and notices for what was changed."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from core.model.base import Seq2Seq
from core.text.pipeline import TextPipeline
from core.text.vocab import UNK_ID

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


def model_device(model: Seq2Seq) -> torch.device:
    return next(model.parameters()).device
