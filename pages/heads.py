"""Heads page: switch attention heads off (or keep only some) and watch the translation change."""

from __future__ import annotations

import streamlit as st

from core.explain import atlas_view, views
from core.explain.ablation import ablated_heads, changed_characters
from core.explain.heads import self_referenced_atlas, summarize
from core.figures import attention as figures
from core.figures import heads as figures_heads
from core.model.intervention import HeadRef, heads_spec
from core.model.registry import ATTENTION_KINDS, KIND_BY_LABEL, spec_for
from pages.ui import ablation, caches, display, page
from pages.ui.widgets import layer_head_pickers

SWITCH_OFF, KEEP_ONLY = "Switch off the chosen heads", "Keep only the chosen heads"
MODE_KEY = "heads_mode"

PICK_KEY, OPENED_KEY = "atlas_pick", "atlas_opened"  # a head clicked in the atlas, to open above

if pick := st.session_state.pop(PICK_KEY, None):
    st.session_state.update(heads_kind=ATTENTION_KINDS[pick[0]], heads_layer=str(pick[1]), heads_head=str(pick[2]))
context = page.start_page("Heads: which ones matter?")
loaded, ablated_trace = context.loaded, context.trace
config = loaded.config
spec = spec_for(config.arch)
kinds = spec.attention_kinds(config)
layers = spec.attention_layers(config.n_enc_layers, config.n_dec_layers)
st.markdown(
    "Switching a head off sets its context vector (its part of the attention output, before the output "
    "projection) to zero, as if that head had never been trained. The model then translates again, here and "
    "on the Translate and Attention pages, until you switch the heads back on."
)


def pills_key(kind: str, layer: int) -> str:
    return f"heads_{kind}_{layer}"


def chosen_heads() -> set[HeadRef]:
    return {
        HeadRef(kind, layer, head - 1)
        for kind in kinds
        for layer in range(layers[kind])
        for head in st.session_state.get(pills_key(kind, layer)) or []
    }


def apply_choice() -> None:
    keep_only = st.session_state.get(MODE_KEY) == KEEP_ONLY
    ablation.set_ablation_spec(heads_spec(ablated_heads(config, chosen_heads(), keep_only)))


def show_spec_in_pills() -> None:
    """When the ablation came from elsewhere (a link, the sidebar's button), the pills show it."""
    keep_only = st.session_state.get(MODE_KEY) == KEEP_ONLY
    current = context.intervention.ablated_heads
    if ablated_heads(config, chosen_heads(), keep_only) == current:
        return
    st.session_state[MODE_KEY] = SWITCH_OFF
    for kind in kinds:
        for layer in range(layers[kind]):
            st.session_state[pills_key(kind, layer)] = sorted(
                h.head + 1 for h in current if h.kind == kind and h.layer == layer
            )


show_spec_in_pills()
st.radio("Mode", [SWITCH_OFF, KEEP_ONLY], key=MODE_KEY, horizontal=True, on_change=apply_choice)
if "heads" in spec.lacks:
    st.info(spec.lacks["heads"])
columns = st.columns(len(kinds))
for column, kind in zip(columns, kinds):
    with column:
        st.markdown(f"**{ATTENTION_KINDS[kind]}**")
        for layer in range(layers[kind]):
            st.pills(
                f"Layer {layer + 1}",
                list(range(1, config.n_heads + 1)),
                selection_mode="multi",
                key=pills_key(kind, layer),
                on_change=apply_choice,
                format_func=lambda head: f"head {head}",
            )
if st.session_state.get(MODE_KEY) == KEEP_ONLY:
    st.caption("In each kind of attention where you chose heads, every other head is switched off.")

original = caches.cached_trace(loaded, ablated_trace.source.text)
off = context.intervention.ablated_specs()
st.subheader(f"{len(off)} of {sum(layers.values()) * config.n_heads} heads switched off" if off else "All heads on")
left, right = st.columns(2)
with left:
    st.caption("All heads on")
    display.big_text(original.translation)
with right:
    st.caption("With the heads switched off (changed characters marked)" if off else "The same model")
    display.big_marked(changed_characters(original.translation, ablated_trace.translation))

st.subheader("Attention of the model with heads switched off")
label = st.segmented_control(
    "Attention", [ATTENTION_KINDS[k] for k in kinds], default=ATTENTION_KINDS["cross"], key="heads_kind", required=True
)
kind = KIND_BY_LABEL[label]
layer, head = layer_head_pickers(layers[kind], config.n_heads, keys=("heads_layer", "heads_head"))
view = views.select(ablated_trace, kind, layer, head)
title = view.title
if head is not None and HeadRef(kind, layer, head) in context.intervention.ablated_heads:
    title += " (switched off: it still attends, but its output is dropped)"
display.chart(
    figures.attention_heatmap(view.matrix, view.query_tokens, view.key_tokens, title, zmax=1.0), "heads_heatmap"
)

st.header("The head atlas")
atlas = caches.shipped_atlas(loaded.sha256) or caches.computed_atlas(loaded)
if atlas is None:
    sentences = atlas_view.atlas_sentences()
    st.info(
        f"No atlas has been computed for this model yet. Computing one switches every head off in turn on "
        f"{len(sentences)} everyday sentences and measures how far each head's absence moves the model's "
        "translations from its own (this model came without its data, so its own output is the reference)."
    )
    if st.button("Compute the atlas for this model", key="compute_atlas"):
        bar = st.progress(0.0, text="Starting…")
        report = lambda what, done, total: bar.progress(done / max(total, 1), text=f"{what}: {done} of {total}")
        describe = {"model": {"file": "uploaded", "sha256": loaded.sha256, "arch": config.arch}, "split": "all"}
        caches.keep_atlas(loaded, self_referenced_atlas(loaded.model, loaded.pipeline, sentences, describe, report))
        st.rerun()
    st.stop()

findings = summarize(atlas)
source = (
    f"{atlas['sentences']} {atlas['split']} sentences" if atlas["split"] != "all" else f"{atlas['sentences']} sentences"
)
st.markdown(
    f"Over {source} (baseline BLEU {atlas['baseline']['bleu']:.2f}): **{findings['prunable_within_1_bleu']} of "
    f"{findings['heads']} heads** can be switched off, least important first, before BLEU drops by more than 1."
    + (
        f" The best-aligning cross-attention head is **{findings['alignment_head']}** "
        f"(alignment error rate {findings['alignment_head_aer']:.2f} against CC-CEDICT links)."
        if findings["alignment_head"]
        else ""
    )
)
measure = st.selectbox("Colour the heads by", list(atlas_view.MEASURES), key="atlas_measure")
grid = atlas_view.grid_values(atlas, measure)
low_high = grid.limits or (None, None)
titles = {kind: ATTENTION_KINDS[kind] for kind in grid.values}
figure = figures_heads.head_grid(grid.values, grid.hover, titles, measure.split(" (")[0], grid.colorscale, *low_high)
event = display.chart(figure, "atlas_grid", on_select="rerun")
clicked = tuple(event.selection.points[0]["customdata"]) if event and event.selection.points else None
if clicked and clicked != st.session_state.get(OPENED_KEY):
    # widget values can only change before the widgets are drawn: remember the head, run again
    st.session_state[OPENED_KEY] = st.session_state[PICK_KEY] = clicked
    st.rerun()
st.caption("Hover a head for all its numbers; click it to open its attention above.")
points = atlas["pruning"]
display.chart(
    figures_heads.pruning_curve(
        [len(p["removed"]) for p in points], [p["bleu"] for p in points], atlas["baseline"]["bleu"], "The pruning curve"
    ),
    "pruning_curve",
)
st.caption(
    "Heads are switched off one more at a time, in the order of how little BLEU each costs alone (not re-measured "
    "after each removal). `python -m core.analyze heads` writes the same atlas as JSON."
)
