"""Explain page: what each output token draws on, by five methods side by side, the share taken
from the source rather than from the words already written, and the decoder's logit lens."""

from __future__ import annotations

import streamlit as st

from core.explain.attention_flow import AttentionChoice
from core.explain.attribution import LOW_SOURCE_SHARE, METHODS, SIGNED, Attribution, explain, row_normalised
from core.explain.attribution import source_share as share_of_source
from core.explain.gradients import completeness_gap
from core.explain.heads import summarize
from core.explain.lens import commit_layer
from core.figures import explain as figures
from core.model.intervention import parse_heads
from pages.ui import caches, display, page

context = page.start_page("Explain: what each output token draws on")
loaded, trace, intervention = context.loaded, context.trace, context.intervention
text, vocab = trace.source.text, loaded.pipeline.tgt_vocab
st.markdown(
    "Attention weights say where a head *looks*, not what the prediction *uses* (Jain & Wallace 2019). "
    "Here five methods answer the same question for every Chinese token: which English tokens did it draw on? "
    "Each row of a map is the step that **produced** that token; each map's rows are scaled to the same total."
)
st.caption("Translation (greedy decoding)")
display.big_text(trace.translation)

attention_views = {"Mean of layers and heads": AttentionChoice(), "Last layer": AttentionChoice("last")}
atlas = caches.shipped_atlas(loaded.sha256) or caches.computed_atlas(loaded)
if atlas and (aligned := summarize(atlas)["alignment_head"]):
    attention_views[f"Alignment head {aligned} (head atlas)"] = AttentionChoice(
        "head", next(iter(parse_heads(aligned)))
    )
if trace.cross.shape[0] == 1:
    attention_views = {"The one attention": AttentionChoice()}
view = st.segmented_control(
    "Raw attention shows",
    list(attention_views),
    default=list(attention_views)[0],
    key="explain_attention",
    required=True,
)
with st.spinner("Computing gradients (integrated gradients take about a second for a short sentence)…"):
    computed = caches.cached_attributions(loaded, text, intervention)
results: dict[str, Attribution] = {
    "attention": explain(loaded.model, trace, vocab, "attention", intervention, attention_views[view])
}
results |= {method: value for method, value in computed.items() if isinstance(value, Attribution)}
missing = {method: reason for method, reason in computed.items() if isinstance(reason, str)}
output_tokens = [step.token for step in trace.steps]
source_tokens = trace.source.tokens

st.subheader("Every output token, every method")
maps = {METHODS[m]: row_normalised(results[m].source) for m in METHODS if m in results}
signed = {METHODS[m] for m in SIGNED}
display.chart(figures.relevance_grid(maps, signed, output_tokens, source_tokens), "explain_grid")
st.caption(
    "Blue maps (attention, norm, rollout) are shares ≥ 0. Gradient maps are signed: blue tokens raise the "
    "produced token's log-probability, red ones lower it. Each row is divided by the sum of its absolute values."
)
for method, reason in missing.items():
    st.caption(f"{METHODS[method]}: {reason}")  # our own words (core.explain.attribution), markdown and all

st.subheader("One step")
labels = [f"{t + 1}: {token}" for t, token in enumerate(output_tokens)]
if len(labels) > 1:
    # option labels are markdown: a token must not become a link
    chosen = st.select_slider(
        "Step (the token it produced)", labels, key="explain_step", format_func=display.md_literal
    )
    step = labels.index(chosen) if chosen in labels else 0
else:
    step = 0
read = " ".join(trace.decoder_tokens[: step + 1])
st.markdown(
    f"Step {step + 1} reads {display.md_literal(read)} and produces **{display.md_literal(output_tokens[step])}**"
    f" (p = {trace.steps[step].prob:.2f})."
)
bars = {METHODS[m]: row_normalised(results[m].source)[step] for m in METHODS if m in results}
display.chart(figures.step_bars(bars, source_tokens, "What this step drew on, by each method"), "explain_step_bars")

ig = results.get("ig")
if ig is not None and ig.prefix is not None:
    shares = share_of_source(ig)
    low = [t for t, share in enumerate(shares) if share < LOW_SOURCE_SHARE]
    display.chart(
        figures.source_share_strip(
            shares, output_tokens, LOW_SOURCE_SHARE, step, "From the source or from the words already written?"
        ),
        "explain_share",
    )
    st.markdown(
        f"This step draws **{shares[step]:.0%}** of its integrated-gradients attribution from the English source "
        f"and {1 - shares[step]:.0%} from the tokens already written. "
        + (
            f"Steps {', '.join(str(t + 1) for t in low)} lean mostly on the words already written: often the "
            "second character of a word (气 after 天) or the end of the sentence. A long run of such steps is a "
            "warning sign: the model continues its own words instead of translating (Dale et al. 2023)."
            if low
            else "No step leans mostly on the prefix."
        )
    )

lens = caches.cached_lens(loaded, text, intervention)
if lens:
    rows = [layer[step] for layer in lens]
    committed = commit_layer(lens, step)
    display.chart(
        figures.lens_table(rows, "Logit lens: what each decoder layer would say at this step"), "explain_lens"
    )
    st.caption(
        f"The output projection applied to every decoder layer's output. The final token "
        f"“{display.md_literal(output_tokens[step])}” is on top from layer {committed + 1} of {len(lens)} on."
    )
else:
    st.caption("Logit lens: this GRU model's layers have no shared readout to read a lens through.")

with st.expander("How each method is computed"):
    st.markdown(
        r"""
- **Raw cross-attention**: the weights $\alpha_{t,s}$ of the chosen view.
- **Norm-based** (Kobayashi et al. 2020): $\sum_h \lVert \alpha^h_{t,s}\, f_h(x_s) \rVert$ with
  $f_h(x) = (x W_V^h + b_V^h)\, W_O^h$, the value vector carried through the head's part of the output
  projection; the mean over decoder layers.
- **Rollout** (Abnar & Zuidema 2020, carried into the decoder): every attention sublayer with its residual
  is $\tfrac12 A + \tfrac12 I$, multiplied from the source through the encoder and the decoder. It splits
  each row between the source and the prefix, but always as $1 - 2^{-L}$ to the source: the share only
  gradients can tell.
- **Gradient × input**: $\partial \log p(y_t) / \partial e \cdot e$ for each input token embedding $e$.
- **Integrated gradients** (Sundararajan et al. 2017; equal to Captum's): from all-zero token embeddings
  (positions kept) to the real ones; the attributions add up to
  $\log p(y_t \mid x) - \log p(y_t \mid \text{baseline})$ (completeness).
"""
    )
    if ig is not None and ig.delta is not None:
        gap = completeness_gap(ig.source, ig.prefix, ig.delta)
        st.caption(f"Integrated gradients on this sentence: completeness gap {gap:.1%} (Σ attributions vs delta).")
    st.caption("`python -m core.explain --method ig` writes the same numbers as JSON.")

if agreement := caches.shipped_agreement(loaded.sha256):
    with st.expander(f"Which explanation aligns best? ({agreement['sentences']} {agreement['split']} sentences)"):
        rows = [
            {"method": name, "precision": scores["precision"], "AER": scores["aer"]}
            for name, scores in agreement["methods"].items()
        ]
        st.dataframe(rows, use_container_width=True, hide_index=True)
        st.caption(
            "How often a method's top English word for a Chinese word is one CC-CEDICT says it translates "
            "(precision; AER = alignment error rate, lower is better). `python -m core.analyze attribution` "
            "computes it for any checkpoint."
        )
