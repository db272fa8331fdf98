"""Masks page: a real padded batch, its four masks, and one head's attention computed stage by
stage, including what a wrong mask fill does."""

from __future__ import annotations

import streamlit as st

from core.explain import mask_lab
from core.figures import masks as figures_masks
from core.model.registry import ATTENTION_KINDS, KIND_BY_LABEL
from pages.ui import caches, display, page
from pages.ui.widgets import MAX_CHARS, layer_head_pickers

context = page.start_page("Masks")
loaded, trace = context.loaded, context.trace
page.require(loaded, "masks")

st.header("A real batch")
default_partner = mask_lab.partner_sentence(len(trace.source.ids))
partner = st.text_input(
    "Second sentence in the batch",
    value=default_partner,
    key="partner",
    max_chars=MAX_CHARS,
    help="Batched with yours, so the shorter one is padded with <pad>.",
)
sentences = (trace.source.text, partner or default_partner)
batch = caches.cached_mask_batch(loaded, sentences)
if batch is None:
    st.stop()
if not batch.has_padding:
    st.info("Both sentences have the same number of tokens, so nothing is padded. Try a longer or shorter one.")
display.chart(
    figures_masks.batch_padding(
        batch.padding_rows(), batch.src_tokens, batch.sentences, "Source batch (encoder input)"
    ),
    "batch_source",
)
st.caption(
    "Sentences of different lengths share one tensor, so the shorter is filled with <pad> (grey). The padding mask "
    "says which positions are real; a <pad> must never receive attention. Decoder inputs are <bos> + each "
    "sentence's own greedy translation, padded the same way."
)
rows = [f"sentence {i + 1}: {s[:60]}" for i, s in enumerate(batch.sentences)]
row = st.radio(
    "Show the masks of",
    range(len(rows)),
    key="mask_row",
    horizontal=True,
    format_func=lambda i: display.md_literal(rows[i]),
)

st.header("The four masks")
st.caption("Blue = may attend (True), grey = blocked (False). Rows are queries, columns are keys.")
masks = batch.masks(row)
columns = st.columns(2)
for index, (name, label) in enumerate(mask_lab.MASK_NAMES.items()):
    query_tokens, key_tokens = batch.axes(name, row)
    with columns[index % 2]:
        display.chart(figures_masks.mask_heatmap(masks[name], query_tokens, key_tokens, label), f"mask_{name}")

st.header("Inside one head: QKᵀ → ÷√d_k → mask → softmax")
label = st.segmented_control(
    "Attention", list(ATTENTION_KINDS.values()), default=ATTENTION_KINDS["decoder"], key="mask_kind", required=True
)
kind = KIND_BY_LABEL[label]
n_layers = loaded.config.n_enc_layers if kind == "encoder" else loaded.config.n_dec_layers
layer, head = layer_head_pickers(n_layers, loaded.config.n_heads, allow_mean=False, keys=("mask_layer", "mask_head"))
stages = caches.cached_score_pipeline(loaded, sentences, kind, layer, head, row)
query_tokens, key_tokens = batch.axes(kind, row)
display.chart(
    figures_masks.score_stages(
        stages.raw, stages.scaled, stages.masked, stages.weights, query_tokens, key_tokens, stages.d_k
    ),
    "score_stages",
)
st.caption(
    f"The model's own tensors for sentence {row + 1}, {label}, layer {layer + 1}, head {head + 1}. Blocked cells "
    "become −∞, so softmax gives them exactly 0 and each row's remaining weights sum to 1."
)

st.subheader("What goes wrong with the wrong fill value")
leaked = stages.max_leaks()
display.chart(
    figures_masks.fill_comparison(stages.fills(), leaked, stages.mask, query_tokens, key_tokens), "fill_comparison"
)
worst = max(leaked, key=leaked.get)
st.markdown(
    f"Filling blocked scores with 0 or a small number such as 1e-6 does not block anything: e^0 = 1 is an ordinary "
    f"weight, so softmax still gives those cells weight (red ×). Here up to **{leaked[worst]:.0%}** of a row's "
    "attention goes to keys it must not see: "
    + ("future tokens, so training would let the decoder copy the answer." if kind == "decoder" else "<pad> tokens.")
    + " Only −∞ (or the dtype's most negative number) gives exactly 0."
)
