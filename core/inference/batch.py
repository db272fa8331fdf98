"""Translating many sentences: batched greedy decoding (or beam search), never an exception for
an empty line."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.inference.beam import beam_search_ids
from core.inference.greedy import greedy_ids
from core.inference.source import EmptyInputError, Source, prepare_source
from core.model.base import Seq2Seq
from core.model.intervention import NO_INTERVENTION, Intervention
from core.text.pipeline import TextPipeline
from core.text.tokenize import output_text


@dataclass
class Translation:
    text: str
    notices: list[str]


def translate(
    model: Seq2Seq,
    pipeline: TextPipeline,
    texts: Sequence[str],
    beam_size: int = 1,
    batch_size: int = 64,
    intervention: Intervention = NO_INTERVENTION,
) -> list[Translation]:
    """Empty sentences give "" with a notice; similar lengths share a batch."""
    results: list[Translation | None] = [None] * len(texts)
    prepared: list[tuple[int, Source]] = []
    for i, text in enumerate(texts):
        try:
            prepared.append((i, prepare_source(model, pipeline, text)))
        except EmptyInputError as err:
            results[i] = Translation("", [str(err)])
    prepared.sort(key=lambda item: len(item[1].ids))
    for start in range(0, len(prepared), batch_size):
        chunk = prepared[start : start + batch_size]
        if beam_size == 1:
            outputs = greedy_ids(model, [s.ids for _, s in chunk], intervention)
        else:
            outputs = [beam_search_ids(model, s.ids, beam_size, intervention=intervention) for _, s in chunk]
        for (i, source), ids in zip(chunk, outputs):
            results[i] = Translation(output_text(pipeline.tgt_vocab.decode(ids)), source.notices)
    return [r for r in results if r is not None]
