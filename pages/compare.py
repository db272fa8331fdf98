"""Compare page: the Transformer and the GRU with Bahdanau attention on one sentence: their
translations, their alignments side by side on one colour scale, and their numbers."""

from __future__ import annotations

import streamlit as st

from core import compare, figures, views
from pages import common, session_models

large = common.page_setup()
st.title("Transformer vs. GRU with Bahdanau attention")
st.markdown(
    "Before the Transformer, translation models read the sentence with a recurrent network and, at each output "
    "step, looked back at the source with **additive attention**: score(s, h) = vᵀ tanh(W_s s + W_h h). "
    "The Transformer keeps that idea as cross-attention and replaces the recurrence with self-attention."
)
models = session_models.available()
by_arch = {
    arch: [label for label, (m, _) in models.items() if m.config.arch == arch] for arch in ("transformer", "rnn")
}
left, right = st.columns(2)
transformer_label = left.selectbox("Transformer", by_arch["transformer"], key="compare_transformer")
rnn_label = right.selectbox("GRU + Bahdanau", by_arch["rnn"], key="compare_rnn")
text = common.sentence_box()

traces = {}
for label in (transformer_label, rnn_label):
    loaded, key = models[label]
    traces[label] = common.get_trace(loaded, key, text)
    if traces[label] is None:
        st.stop()
common.show_source(traces[transformer_label])
common.side_by_side(large, *((label, trace.translation) for label, trace in traces.items()))

st.header("Where each model looks")
transformer_trace, rnn_trace = traces[transformer_label], traces[rnn_label]
layer, head = common.layer_head_pickers(*transformer_trace.cross.shape[:2])
views_ = [views.select(transformer_trace, "cross", layer, head), views.select(rnn_trace, "cross", 0, None)]
titles = [f"Transformer: {views_[0].title}", "GRU: Bahdanau attention"]
for column, view, title, name in zip(st.columns(2), views_, titles, ("transformer", "rnn")):
    column.plotly_chart(
        common.styled(
            figures.attention_heatmap(view.matrix, view.query_tokens, view.key_tokens, title, zmax=1.0), large
        ),
        key=f"alignment_{name}",
    )
st.caption(
    "Rows: the decoder token each step reads (its output is the next row's label); columns: the source tokens. "
    "Both on the same 0–1 scale. Bahdanau's attention is one distribution per step; the Transformer has one per "
    "layer and head (choose above, or their mean)."
)

st.header("In numbers")
chosen = {label: models[label][0] for label in (transformer_label, rnn_label)}
timings = {label: common.cached_decoding_ms(*models[label], text) for label in chosen}
st.dataframe(compare.comparison_table(chosen, timings), width="stretch")
st.caption(
    "Scores and training time come from each checkpoint's card; decoding time is measured on this sentence "
    "the first time it is shown here."
)
