"""Compare page: the Transformer and the GRU with Bahdanau attention on one sentence: their
translations, their alignments side by side on one colour scale, and their numbers."""

from __future__ import annotations

import streamlit as st

from core.explain import compare, views
from core.figures import attention as figures
from core.model.registry import ARCHITECTURES
from pages.ui import display, page, session_models
from pages.ui.caches import cached_decoding_ms
from pages.ui.widgets import layer_head_pickers, sentence_box

page.page_setup()
st.title("Transformer vs. GRU with Bahdanau attention")
st.markdown(
    "Before the Transformer, translation models read the sentence with a recurrent network and, at each output "
    "step, looked back at the source with **additive attention**: score(s, h) = vᵀ tanh(W_s s + W_h h). "
    "The Transformer keeps that idea as cross-attention and replaces the recurrence with self-attention."
)
models = session_models.available()
by_arch = {arch: [label for label, m in models.items() if m.config.arch == arch] for arch in ARCHITECTURES}
left, right = st.columns(2)
transformer_label = left.selectbox("Transformer", by_arch["transformer"], key="compare_transformer")
rnn_label = right.selectbox("GRU + Bahdanau", by_arch["rnn"], key="compare_rnn")
text = sentence_box()

traces = {}
for label in (transformer_label, rnn_label):
    traces[label] = page.get_trace(models[label], text)
    if traces[label] is None:
        st.stop()
display.show_source(traces[transformer_label])
display.side_by_side(*((label, trace.translation) for label, trace in traces.items()))

st.header("Where each model looks")
transformer_trace, rnn_trace = traces[transformer_label], traces[rnn_label]
layer, head = layer_head_pickers(*transformer_trace.cross.shape[:2])
views_ = [views.select(transformer_trace, "cross", layer, head), views.select(rnn_trace, "cross", 0, None)]
titles = [f"Transformer: {views_[0].title}", "GRU: Bahdanau attention"]
for column, view, title, name in zip(st.columns(2), views_, titles, ("transformer", "rnn")):
    with column:
        display.chart(
            figures.attention_heatmap(view.matrix, view.query_tokens, view.key_tokens, title, zmax=1.0),
            f"alignment_{name}",
        )
st.caption(
    "Rows: the decoder token each step reads (its output is the next row's label); columns: the source tokens. "
    "Both on the same 0–1 scale. Bahdanau's attention is one distribution per step; the Transformer has one per "
    "layer and head (choose above, or their mean)."
)

st.header("In numbers")
chosen = {label: models[label] for label in (transformer_label, rnn_label)}
timings = {label: cached_decoding_ms(loaded, text) for label, loaded in chosen.items()}
st.dataframe(compare.comparison_table(chosen, timings), width="stretch")
st.caption(
    "Scores and training time come from each checkpoint's card; decoding time is measured on this sentence "
    "the first time it is shown here."
)
