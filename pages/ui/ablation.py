"""The heads this session has switched off: one spec string in session state and in the URL
(?ablate=enc:1:2,cross:3:4), turned into the Intervention every page's trace uses."""

from __future__ import annotations

import streamlit as st

from core.io.checkpoint import LoadedModel
from core.model.intervention import NO_INTERVENTION, Intervention, parse_heads
from core.model.registry import check_heads
from pages.ui.display import md_literal

ABLATE_KEY = "ablate"


def ablation_spec() -> str:
    if ABLATE_KEY not in st.session_state:
        st.session_state[ABLATE_KEY] = st.query_params.get(ABLATE_KEY, "")
    return st.session_state[ABLATE_KEY]


def set_ablation_spec(spec: str) -> None:
    st.session_state[ABLATE_KEY] = spec
    if spec:
        st.query_params[ABLATE_KEY] = spec
    else:
        st.query_params.pop(ABLATE_KEY, None)


def current_intervention(loaded: LoadedModel) -> Intervention:
    """The session's ablation for this model; a spec this model cannot take (a link made for
    another model) is dropped with a message."""
    spec = ablation_spec()
    if not spec:
        return NO_INTERVENTION
    try:
        heads = parse_heads(spec)
        check_heads(loaded.config, heads)
    except ValueError as err:
        st.warning(f"The heads in the link were not switched off: {md_literal(str(err))}")
        set_ablation_spec("")
        return NO_INTERVENTION
    if st.query_params.get(ABLATE_KEY) != spec:
        st.query_params[ABLATE_KEY] = spec  # page switches drop it from the URL; a link should carry it
    return Intervention(ablated_heads=heads)
