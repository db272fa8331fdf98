"""Attention page: any head of any layer as a heatmap, all heads at once, and layer averages."""

from __future__ import annotations

import streamlit as st

from core.explain import views
from core.figures import attention as figures
from core.model.registry import ATTENTION_KINDS, KIND_BY_LABEL, spec_for
from pages.ui import display, page
from pages.ui.widgets import layer_head_pickers

context = page.start_page("Attention, head by head")
loaded, trace = context.loaded, context.trace
st.caption(f"Translation: {display.md_literal(trace.translation)}")

spec = spec_for(loaded.config.arch)
kinds = [ATTENTION_KINDS[kind] for kind in spec.attention_kinds(loaded.config)]
if st.session_state.get("kind") not in (None, *kinds):
    del st.session_state["kind"]  # e.g. a link to encoder attention, opened with the GRU model
if "heads" in spec.lacks:
    st.info(spec.lacks["heads"])
label = st.segmented_control(
    "Attention",
    kinds,
    default=ATTENTION_KINDS["cross"],
    key="kind",
    bind="query-params",
    required=True,
)
kind = KIND_BY_LABEL[label]
layer, head = layer_head_pickers(*views.layer_stack(trace, kind).shape[:2])
chinese_axes = {"encoder": (False, False), "decoder": (True, True), "cross": (True, False)}[kind]
group = False
if loaded.pipeline.zh_tokenizer == "char" and any(chinese_axes):
    group = st.toggle(
        "Group Chinese characters into jieba words",
        key="group_words",
        help="A word's column is the sum of its characters' columns (the attention given to the word); "
        "a word's row is the mean of its characters' rows.",
    )

if kind != "encoder":
    st.caption(
        "Each decoder row is labelled with the token that position reads; "
        "the token it produces is the label of the next row (the last row produces <eos>)."
    )
view = views.select(trace, kind, layer, head)
if group:
    view = views.group_view(view, *chinese_axes)
display.chart(
    figures.attention_heatmap(view.matrix, view.query_tokens, view.key_tokens, view.title, zmax=1.0), "main_heatmap"
)
st.download_button(
    "Download this map (CSV)", views.to_csv(view), file_name=f"attention_{kind}_layer{layer + 1}.csv", mime="text/csv"
)

rows, cols = views.axis_tokens(trace, kind)
stack = views.layer_stack(trace, kind)
st.subheader("All heads at once")
st.caption(
    "Rows are layers, columns are heads (same colour scale, 0 to 1). Choose a layer and head above to enlarge one."
)
display.chart(figures.heads_grid(stack, rows, cols, ATTENTION_KINDS[kind]), "heads_grid")
st.subheader("Each layer, averaged over its heads")
display.chart(figures.layer_means(stack, rows, cols), "layer_means")
