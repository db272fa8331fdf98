"""What every page begins with: the router check, the sidebar, and for most pages the sentence
box and its trace."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.explain import model_card
from core.inference.source import EmptyInputError
from core.inference.trace import Trace
from core.io.checkpoint import LoadedModel
from core.model.intervention import NO_INTERVENTION, Intervention
from core.model.registry import spec_for
from pages.ui.ablation import current_intervention, set_ablation_spec
from pages.ui.caches import cached_trace
from pages.ui.display import large_type_css, md_literal, show_source
from pages.ui.routing import ensure_router
from pages.ui.session_models import active_label, active_model, evicted_notice
from pages.ui.state import LARGE_TYPE_KEY, keep_shared_state
from pages.ui.widgets import sentence_box


def page_setup() -> LoadedModel:
    """Sidebar controls common to every page; returns the session's active model."""
    return _setup()[0]


def _setup() -> tuple[LoadedModel, Intervention]:
    """The sidebar; the session's model and its ablation (read and checked once per run)."""
    ensure_router()
    keep_shared_state()
    if st.sidebar.toggle("Large type (for talks)", key=LARGE_TYPE_KEY, bind="query-params"):
        large_type_css()
    loaded = active_model()
    if notice := evicted_notice():
        st.warning(md_literal(notice))
    st.sidebar.caption(f"Model: {active_label()} (choose on the Models page). {model_card.summary(loaded)}")
    if scores := model_card.scores_line(loaded.model_card):
        st.sidebar.caption(scores)
    intervention = current_intervention(loaded)
    if ablated := intervention.ablated_specs():
        st.sidebar.warning(f"Heads switched off (Heads page): {', '.join(ablated)}")
        st.sidebar.button("Switch every head back on", on_click=set_ablation_spec, args=("",), key="heads_all_on")
    return loaded, intervention


def require(loaded: LoadedModel, feature: str) -> None:
    """Stop a page whose subject this model's architecture lacks, saying why (see ArchSpec.lacks)."""
    if reason := spec_for(loaded.config.arch).lacks.get(feature):
        st.info(f"{reason} Choose a Transformer on the Models page, or compare the two on the Compare page.")
        st.stop()


def get_trace(
    loaded: LoadedModel, text: str, forced: tuple[str, ...] = (), intervention: Intervention = NO_INTERVENTION
) -> Trace | None:
    """The trace, or None after telling the user why there is none (never a traceback)."""
    try:
        return cached_trace(loaded, text, forced, intervention=intervention)
    except EmptyInputError as err:
        st.info(f"{md_literal(str(err))} Or pick one of the examples.")
    except ValueError as err:
        st.error(f"This input cannot be translated: {md_literal(str(err))}")
    return None


@dataclass
class PageContext:
    loaded: LoadedModel
    trace: Trace  # of the session's model with its ablated heads switched off
    intervention: Intervention


def start_page(title: str) -> PageContext:
    """Sidebar, title, the sentence box and its trace (or a stop, after saying why)."""
    loaded, intervention = _setup()
    st.title(title)
    trace = get_trace(loaded, sentence_box(), intervention=intervention)
    if trace is None:
        st.stop()
    show_source(trace)
    return PageContext(loaded, trace, intervention)
