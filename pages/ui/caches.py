"""Cached computations for the pages. Every cache is keyed by the model itself: LoadedModel hashes
as the SHA-256 of its checkpoint file, so a result can never be paired with another model."""

from __future__ import annotations

import threading
from collections import OrderedDict

import streamlit as st

from core.explain import atlas_view, compare, mask_lab, positional
from core.explain.attribution import APP_IG_LIMIT, Attribution, explain_all
from core.explain.lens import LensRow, has_lens, logit_lens
from core.inference.batch import translate
from core.inference.trace import Trace, trace
from core.io.checkpoint import LoadedModel
from core.io.paths import EXPLAIN_DIR
from core.model.intervention import NO_INTERVENTION, Intervention
from pages.ui.display import md_literal

BY_MODEL_FILE = {LoadedModel: lambda loaded: loaded.sha256}


# Bounded by count, not bytes: a trace is 7-27 KB for everyday sentences but up to ~2 MB for a
# 100-token input, so 128 entries keep the worst case near 250 MB; a miss costs ~20 ms.
@st.cache_data(max_entries=128, show_spinner=False, hash_funcs=BY_MODEL_FILE)
def cached_trace(
    loaded: LoadedModel,
    text: str,
    forced: tuple[str, ...] = (),
    top_k: int = 5,
    intervention: Intervention = NO_INTERVENTION,
) -> Trace:
    return trace(loaded.model, loaded.pipeline, text, forced=forced, top_k=top_k, intervention=intervention)


# Integrated gradients take ~1 s for a 10-word sentence (up to ~8 s at APP_IG_LIMIT); the arrays
# are small (steps × tokens), so many sentences fit.
@st.cache_data(max_entries=128, show_spinner=False, hash_funcs=BY_MODEL_FILE)
def cached_attributions(
    loaded: LoadedModel, text: str, intervention: Intervention = NO_INTERVENTION
) -> dict[str, Attribution | str]:
    traced = cached_trace(loaded, text, intervention=intervention)
    return explain_all(loaded.model, traced, loaded.pipeline.tgt_vocab, intervention, APP_IG_LIMIT)


@st.cache_data(max_entries=128, show_spinner=False, hash_funcs=BY_MODEL_FILE)
def cached_lens(loaded: LoadedModel, text: str, intervention: Intervention = NO_INTERVENTION) -> list[list[LensRow]]:
    """[layer][step] top-5; empty for a model without a lens. Traced again with the layer states
    (~20 ms), so the shared trace cache does not keep them."""
    if not has_lens(loaded.model):
        return []
    traced = trace(loaded.model, loaded.pipeline, text, intervention=intervention, keep_layer_states=True)
    return logit_lens(loaded.model, traced, loaded.pipeline.tgt_vocab)


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=BY_MODEL_FILE)
def cached_bag_of_words(loaded: LoadedModel, text: str) -> positional.BagOfWordsCheck:
    return positional.bag_of_words_check(loaded.model, loaded.pipeline, cached_trace(loaded, text))


@st.cache_data(max_entries=64, show_spinner=False, hash_funcs=BY_MODEL_FILE)
def _mask_batch(loaded: LoadedModel, sentences: tuple[str, ...]) -> mask_lab.MaskBatch:
    return mask_lab.build_batch(loaded.model, loaded.pipeline, list(sentences))


def cached_mask_batch(loaded: LoadedModel, sentences: tuple[str, ...]) -> mask_lab.MaskBatch | None:
    """The batch for the masks page, or None after saying why there is none."""
    try:
        return _mask_batch(loaded, sentences)
    except ValueError as err:
        st.info(f"The second sentence cannot be used: {md_literal(str(err))}")
    return None


@st.cache_data(max_entries=128, show_spinner=False, hash_funcs=BY_MODEL_FILE)
def cached_score_pipeline(
    loaded: LoadedModel, sentences: tuple[str, ...], kind: str, layer: int, head: int, row: int
) -> mask_lab.ScorePipeline:
    return mask_lab.score_pipeline(loaded.model, _mask_batch(loaded, sentences), kind, layer, head, row)


@st.cache_data(max_entries=256, show_spinner="Timing the model…", hash_funcs=BY_MODEL_FILE)
def cached_decoding_ms(loaded: LoadedModel, text: str) -> float:
    """Measured once per model and sentence, not on every rerun (a layer or head change)."""
    return compare.decoding_ms(loaded, text)


@st.cache_data(max_entries=512, show_spinner=False, hash_funcs=BY_MODEL_FILE)
def cached_beam(loaded: LoadedModel, text: str, beam: int, intervention: Intervention = NO_INTERVENTION) -> str:
    return translate(loaded.model, loaded.pipeline, [text], beam_size=beam, intervention=intervention)[0].text


# Atlases computed on demand (a few seconds to a minute each): kept for every session, a few at most.
MAX_COMPUTED_ATLASES = 8
_atlases: OrderedDict[str, dict] = OrderedDict()
_atlases_lock = threading.Lock()


def computed_atlas(loaded: LoadedModel) -> dict | None:
    with _atlases_lock:
        return _atlases.get(loaded.sha256)


def keep_atlas(loaded: LoadedModel, atlas: dict) -> None:
    """Shared read-only by every session that uses the same model file; the oldest is dropped."""
    with _atlases_lock:
        _atlases[loaded.sha256] = atlas
        _atlases.move_to_end(loaded.sha256)
        while len(_atlases) > MAX_COMPUTED_ATLASES:
            _atlases.popitem(last=False)


@st.cache_data(max_entries=8, show_spinner=False)
def shipped_atlas(sha256: str) -> dict | None:
    """The precomputed atlas of this checkpoint file, read from assets/atlas once per server."""
    return atlas_view.shipped_atlas(sha256)


@st.cache_data(max_entries=8, show_spinner=False)
def shipped_agreement(sha256: str) -> dict | None:
    """The precomputed agreement table of this checkpoint file (assets/explain), or None."""
    return atlas_view.precomputed(sha256, EXPLAIN_DIR)
