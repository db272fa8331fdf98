"""Attention page: any head of any layer as a heatmap, all heads at once, and layer averages."""

from __future__ import annotations

import streamlit as st

from core import figures, views
from pages import common

page = common.start_page("Attention, head by head")
large, loaded, trace = page.large, page.loaded, page.trace
st.caption(f"Translation: {trace.translation}")

kinds = [views.KINDS[kind] for kind in views.KINDS if views.layer_stack(trace, kind).shape[0]]
if st.session_state.get("kind") not in (None, *kinds):
    del st.session_state["kind"]  # e.g. a link to encoder attention, opened with the GRU model
if len(kinds) < len(views.KINDS):
    st.info(
        "This GRU model has one attention, from the decoder to the source (Bahdanau's additive attention): "
        "no self-attention, no heads, no layers of attention."
    )
label = st.segmented_control(
    "Attention",
    kinds,
    default=views.KINDS["cross"],
    key="kind",
    bind="query-params",
    required=True,
)
kind = views.KIND_BY_LABEL[label]
layer, head = common.layer_head_pickers(*views.layer_stack(trace, kind).shape[:2])
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
st.plotly_chart(
    common.styled(
        figures.attention_heatmap(view.matrix, view.query_tokens, view.key_tokens, view.title, zmax=1.0), large
    ),
    key="main_heatmap",
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
st.plotly_chart(common.styled(figures.heads_grid(stack, rows, cols, views.KINDS[kind]), large), key="heads_grid")
st.subheader("Each layer, averaged over its heads")
st.plotly_chart(common.styled(figures.layer_means(stack, rows, cols), large), key="layer_means")
