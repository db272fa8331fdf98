"""Positional encoding page: the sinusoidal table, its distance-only similarity, how it joins the
token embeddings, and what the model does without it."""

from __future__ import annotations

import streamlit as st

from core.explain import positional, views
from core.figures import attention as figures
from core.figures import position as figures_position
from core.model.intervention import POSITION_MODES, Intervention, shuffled_positions
from pages.ui import caches, display, page
from pages.ui.widgets import sentence_box

loaded = page.page_setup()
page.require(loaded, "positions")
d_model, max_len = loaded.config.d_model, loaded.config.max_len
st.title("Positional encoding")
st.markdown(
    "Attention compares every token with every other token and ignores their order. The model learns word order "
    "only from the **positional encoding** added to each token's embedding:"
)
st.latex(
    r"PE_{p,\,2j} = \sin\!\left(\frac{p}{10000^{2j/d}}\right) \qquad PE_{p,\,2j+1} = \cos\!\left(\frac{p}{10000^{2j/d}}\right)"
)

st.header("The table")
length = st.slider("Positions shown", 8, max_len, min(60, max_len), key="pe_length")
table = positional.pe_table(d_model, length)
display.chart(figures_position.pe_heatmap(table, f"PE for positions 0–{length - 1} × {d_model} dimensions"), "pe_table")
st.caption("Left columns change fast with the position, right columns slowly: every pair of dimensions is a clock.")

st.subheader("Each dimension is a wave")
defaults = [d for d in (0, 1, 10, 40, d_model // 2) if d < d_model]
dims = st.multiselect("Dimensions", list(range(d_model)), default=defaults, key="pe_dims")
display.chart(figures_position.pe_dimensions(table, dims, positional.wavelengths(d_model).tolist()), "pe_lines")
st.caption(
    f"Wavelengths grow geometrically from 2π ≈ 6 positions (dimension 0) to about {positional.wavelengths(d_model)[-1]:,.0f} "
    f"(dimension {d_model - 1}), so nearby positions differ in the fast dimensions and distant ones in the slow."
)

st.subheader("Similarity depends only on distance")
similarity = positional.similarity(table)
spread = positional.diagonal_spread(similarity)
left, right = st.columns(2)
with left:
    display.chart(figures_position.pe_similarity(similarity, "PE · PEᵀ"), "pe_similarity")
with right:
    display.chart(
        figures_position.distance_profile(*positional.distance_profile(table), "PE_0 · PE_k against the distance k"),
        "pe_distance",
    )
st.markdown(
    f"PE_p · PE_q = Σ_j cos((p − q)·ω_j): it depends on p − q only, so every diagonal of the matrix is constant "
    f"(largest difference along a diagonal here: **{spread:.1e}**, float rounding, against a diagonal value of "
    f"{similarity[0, 0]:.0f} = d/2). Each position is most similar to itself, and PE_(p+k) is a fixed rotation "
    "of PE_p, which lets attention find relative positions."
)

st.header("Your sentence: embedding + position")
text = sentence_box()
trace = page.get_trace(loaded, text)
if trace is None:
    st.stop()
display.show_source(trace)
parts = positional.embedding_parts(loaded.model, trace.source.ids, trace.source.tokens)
display.chart(
    figures_position.embedding_parts(
        parts.tokens,
        {
            "embedding × √d_model": parts.scaled,
            "positional encoding": parts.positional,
            "sum: encoder input": parts.total,
        },
    ),
    "pe_parts",
)
norms = parts.norms()
display.chart(figures_position.vector_norms(parts.tokens, norms, "Vector lengths"), "pe_norms")
mean = {label: sum(values) / len(values) for label, values in norms.items()}
st.markdown(
    f"Each PE row has length √(d/2) = **{mean['positional encoding']:.1f}**. The learned embeddings are small "
    f"(mean length **{mean['embedding (raw)']:.2f}**); multiplied by √d_model = {d_model**0.5:.0f} they reach "
    f"**{mean['embedding × √d_model']:.1f}**, so the word, not its position, dominates the sum (mean length "
    f"{mean['sum (encoder input)']:.1f}). Without the scaling the position would drown the word."
)

st.header("Ablation: take the positions away")
mode = st.radio(
    "Encoder input",
    ["removed", "shuffled"],
    format_func=lambda m: POSITION_MODES[m],
    horizontal=True,
    key="pe_ablation",
)
ablated = caches.cached_trace(loaded, text, intervention=Intervention(source_positions=mode))
display.side_by_side(
    ("With positions (as trained)", trace.translation),
    (f"With {POSITION_MODES[mode]}", ablated.translation),
)
tokens = trace.source.tokens
if mode == "shuffled":
    order = shuffled_positions(len(tokens))
    st.caption("Each token gets another token's position; the encoder now reads the sentence in this order:")
    st.html(display.chips(positional.reading_order(tokens, order)))
else:
    check = caches.cached_bag_of_words(loaded, text)
    same = "the same translation" if check.same else "a different translation"
    st.markdown(
        f"Without positions the encoder sees a **bag of words**: the words reversed "
        f"(“{display.md_literal(check.reversed_text)}”) give **{same}**: {display.md_literal(check.translation)}"
    )
n_layers = loaded.config.n_enc_layers
layer = st.select_slider("Encoder layer", list(range(1, n_layers + 1)), value=n_layers, key="pe_layer") - 1
maps = [views.select(t, "encoder", layer, None) for t in (trace, ablated)]
columns = st.columns(2)
for column, view, caption in zip(columns, maps, ("with positions", POSITION_MODES[mode])):
    with column:
        display.chart(
            figures.attention_heatmap(view.matrix, view.query_tokens, view.key_tokens, caption, zmax=1.0),
            f"pe_attention_{caption}",
        )
st.caption(
    f"Encoder self-attention in layer {layer + 1}, mean of the heads. Only the encoder's input changes; "
    "the decoder keeps its own positions."
)
