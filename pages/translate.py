"""Translate page: the translation, then greedy decoding step by step, with branching."""

from __future__ import annotations

import json

import streamlit as st

from core.explain import views
from core.figures import attention as figures
from core.inference.trace import Trace
from core.model.registry import spec_for
from pages.ui import caches, display, page, player
from pages.ui.widgets import layer_head_pickers

PLAY_SECONDS = 0.9

context = page.start_page("Translate, step by step")
loaded, trace, intervention = context.loaded, context.trace, context.intervention

beam = st.sidebar.slider("Beam size", 1, 8, 1, key="beam", help="Beam search next to greedy when above 1")
if beam > 1:
    beam_text = caches.cached_beam(loaded, trace.source.text, beam, intervention)
    display.side_by_side(
        ("Greedy (what the steps below show)", trace.translation), (f"Beam search, {beam} beams", beam_text)
    )
else:
    st.caption("Translation (greedy decoding)")
    display.big_text(trace.translation)

st.divider()
st.subheader("Decoding, one token at a time")
steps = player.StepPlayer(st.session_state, len(trace.steps))
player.forget_picks_of_other_sentences(st.session_state, (loaded.sha256, trace.source.text, intervention))


def render_step(trace: Trace) -> None:
    if steps.take_toggle():
        st.rerun()  # a click inside this fragment reruns only the fragment; the timer needs a full run
    if steps.tick():
        st.rerun()  # played to the end: a full run stops the timer
    total = steps.total
    controls = st.columns([1.6, 1.3, 1.3, 4])
    controls[0].button(
        "Previous", icon=":material/chevron_left:", on_click=steps.move, args=(-1,), use_container_width=True
    )
    controls[1].button(
        "Next", icon=":material/chevron_right:", on_click=steps.move, args=(1,), use_container_width=True
    )
    controls[2].button(
        "Pause" if steps.playing else "Play",
        icon=":material/pause:" if steps.playing else ":material/play_arrow:",
        on_click=steps.toggle,
        use_container_width=True,
    )
    step = (
        controls[3].slider("Step", 1, max(total, 2), 1, key=player.STEP_KEY, bind="query-params", disabled=total < 2)
        if total > 1
        else 1
    )
    index = step - 1
    current = trace.steps[index]
    st.markdown(f"**Step {step} of {total}.** The decoder has read the tokens below and chooses the next one.")
    st.html(display.chips(trace.decoder_tokens[: index + 1] + [current.token], highlight=index + 1, mark_unknown=False))

    left, right = st.columns(2)
    with left:
        display.chart(
            figures.topk_bar(current.top_k, current.token, f"Next-token candidates (chose “{current.token}”)"),
            "topk_chart",
        )
    with right:
        layer, head = layer_head_pickers(*trace.cross.shape[:2])
        cross = views.select(trace, "cross", layer, head)
        display.chart(
            figures.attention_bars(
                cross.matrix[index],
                cross.key_tokens,
                f"Cross-attention to the source · {cross.title.split(' · ', 1)[1]}",
                "source token",
            ),
            "cross_chart",
        )
    if "decoder" in spec_for(loaded.config.arch).attention_kinds(loaded.config):
        self_view = views.select(trace, "decoder", layer, head)
        display.chart(
            figures.attention_bars(
                self_view.matrix[index, : index + 1],
                self_view.key_tokens[: index + 1],
                "Masked self-attention over the tokens so far",
                "decoder token",
            ),
            "self_chart",
        )
    else:
        st.caption(spec_for(loaded.config.arch).lacks["self_attention"])
    render_branch(trace, index)
    st.download_button(
        "Download this step's cross-attention (CSV)",
        views.to_csv(
            views.AttentionView(cross.matrix[index : index + 1], [current.token], cross.key_tokens, cross.title)
        ),
        file_name="cross_attention_step.csv",
        mime="text/csv",
    )


def render_branch(trace: Trace, index: int) -> None:
    """Pick another candidate at this step; decoding continues greedily from that forced prefix."""
    alternatives = [token for token, _ in trace.steps[index].top_k if token != trace.steps[index].token]
    if not alternatives:
        return
    pick = st.pills(
        "What if the model had chosen another token here?",
        alternatives,
        key=player.branch_key(index),
        format_func=display.md_literal,  # pill labels are markdown: a token must not become a link
    )
    if pick is None:
        return
    forced = tuple(s.token for s in trace.steps[:index]) + (pick,)
    branch = page.get_trace(loaded, trace.source.text, forced, intervention)
    if branch is None:
        return
    display.side_by_side(
        ("Original (greedy)", trace.translation),
        (f"Branch: “{display.md_literal(pick)}” at step {index + 1}, then greedy", branch.translation),
    )
    st.html(display.chips(branch.decoder_tokens[1:] + [branch.steps[-1].token], highlight=index, mark_unknown=False))


st.fragment(run_every=PLAY_SECONDS if steps.playing else None)(render_step)(trace)

st.divider()
st.download_button(
    "Download the trace (JSON)",
    json.dumps(trace.to_json(), ensure_ascii=False),
    file_name="translucent_trace.json",
    mime="application/json",
    help="Tokens, probabilities and every attention weight, in the schema of DESIGN.md",
)
