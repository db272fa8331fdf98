"""Translate page: the translation, then greedy decoding step by step, with branching."""

from __future__ import annotations

import json

import streamlit as st

from core import figures, views
from core.decoding import Trace
from pages import common

PLAY_SECONDS = 0.9

page = common.start_page("Translate, step by step")
large, loaded, model_key, trace = page.large, page.loaded, page.model_key, page.trace

beam = st.sidebar.slider("Beam size", 1, 8, 1, key="beam", help="Beam search next to greedy when above 1")
if beam > 1:
    beam_text = common.cached_beam(loaded, model_key, trace.source.text, beam)
    common.side_by_side(
        large, ("Greedy (what the steps below show)", trace.translation), (f"Beam search, {beam} beams", beam_text)
    )
else:
    st.caption("Translation (greedy decoding)")
    common.big_text(trace.translation, large)

st.divider()
st.subheader("Decoding, one token at a time")
total = len(trace.steps)
if st.session_state.get("step") is not None and not 1 <= st.session_state["step"] <= total:
    st.session_state["step"] = 1  # a new, shorter sentence or a stale link
if st.session_state.get("picks_for") != (model_key, trace.source.text):
    # A branch pick belongs to the sentence and model it was made on: without this, a token picked
    # for one sentence stays selected for the next one whenever it is among that one's candidates.
    for key in [key for key in st.session_state if str(key).startswith("branch_")]:
        del st.session_state[key]
    st.session_state["picks_for"] = (model_key, trace.source.text)


def _move(delta: int) -> None:
    st.session_state["step"] = min(total, max(1, st.session_state.get("step", 1) + delta))


def _toggle_play() -> None:
    playing = not st.session_state.get("playing", False)
    st.session_state["playing"] = playing
    st.session_state["play_toggled"] = True  # the timer is set up by a full run (see below)
    if playing and st.session_state.get("step", 1) >= total:
        st.session_state["step"] = 1


def render_step(trace: Trace) -> None:
    if st.session_state.pop("play_toggled", False):
        st.rerun()  # a click inside this fragment reruns only the fragment; the timer needs a full run
    if st.session_state.get("playing") and st.session_state.get("step", 1) < total:
        st.session_state["step"] = st.session_state.get("step", 1) + 1
    elif st.session_state.get("playing"):
        st.session_state["playing"] = False
        st.rerun()
    playing = st.session_state.get("playing", False)
    controls = st.columns([1.6, 1.3, 1.3, 4])
    controls[0].button("Previous", icon=":material/chevron_left:", on_click=_move, args=(-1,), use_container_width=True)
    controls[1].button("Next", icon=":material/chevron_right:", on_click=_move, args=(1,), use_container_width=True)
    controls[2].button(
        "Pause" if playing else "Play",
        icon=":material/pause:" if playing else ":material/play_arrow:",
        on_click=_toggle_play,
        use_container_width=True,
    )
    step = (
        controls[3].slider("Step", 1, max(total, 2), 1, key="step", bind="query-params", disabled=total < 2)
        if total > 1
        else 1
    )
    index = step - 1
    current = trace.steps[index]
    st.markdown(f"**Step {step} of {total}.** The decoder has read the tokens below and chooses the next one.")
    st.html(common.chips(trace.decoder_tokens[: index + 1] + [current.token], highlight=index + 1, mark_unknown=False))

    left, right = st.columns(2)
    with left:
        st.plotly_chart(
            common.styled(
                figures.topk_bar(current.top_k, current.token, f"Next-token candidates (chose “{current.token}”)"),
                large,
            ),
            key="topk_chart",
        )
    with right:
        layer, head = common.layer_head_pickers(*trace.cross.shape[:2])
        cross = views.select(trace, "cross", layer, head)
        st.plotly_chart(
            common.styled(
                figures.attention_bars(
                    cross.matrix[index],
                    cross.key_tokens,
                    f"Cross-attention to the source · {cross.title.split(' · ', 1)[1]}",
                    "source token",
                ),
                large,
            ),
            key="cross_chart",
        )
    if trace.decoder.shape[0]:
        self_view = views.select(trace, "decoder", layer, head)
        st.plotly_chart(
            common.styled(
                figures.attention_bars(
                    self_view.matrix[index, : index + 1],
                    self_view.key_tokens[: index + 1],
                    "Masked self-attention over the tokens so far",
                    "decoder token",
                ),
                large,
            ),
            key="self_chart",
        )
    else:
        st.caption("This GRU model has no self-attention: its recurrent state carries the tokens so far.")
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
    pick = st.pills("What if the model had chosen another token here?", alternatives, key=f"branch_{index}")
    if pick is None:
        return
    forced = tuple(s.token for s in trace.steps[:index]) + (pick,)
    branch = common.get_trace(loaded, model_key, trace.source.text, forced)
    if branch is None:
        return
    common.side_by_side(
        large,
        ("Original (greedy)", trace.translation),
        (f"Branch: “{pick}” at step {index + 1}, then greedy", branch.translation),
    )
    st.html(common.chips(branch.decoder_tokens[1:] + [branch.steps[-1].token], highlight=index, mark_unknown=False))


st.fragment(run_every=PLAY_SECONDS if st.session_state.get("playing") else None)(render_step)(trace)

st.divider()
st.download_button(
    "Download the trace (JSON)",
    json.dumps(trace.to_json(), ensure_ascii=False),
    file_name="translucent_trace.json",
    mime="application/json",
    help="Tokens, probabilities and every attention weight, in the schema of DESIGN.md",
)
