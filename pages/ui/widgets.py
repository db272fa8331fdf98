"""Input widgets shared by the pages: the sentence box and the layer/head pickers."""

from __future__ import annotations

import streamlit as st

from pages.ui.state import SENTENCE_KEY

MAX_CHARS = 5000
EXAMPLES = (
    "I like to read books.",
    "Where is the train station?",
    "Tom is taller than Mary.",
    "It is raining today, so I will stay at home.",
    "My brother bought a new car last week.",
)


def _use_example(example: str) -> None:
    st.session_state[SENTENCE_KEY] = example


def sentence_box() -> str:
    """The English sentence (shared by all pages and kept in the URL), with examples one click away."""
    if SENTENCE_KEY not in st.session_state:
        st.session_state[SENTENCE_KEY] = st.query_params.get(SENTENCE_KEY, EXAMPLES[0])
    text = st.text_area(
        "English sentence",
        key=SENTENCE_KEY,
        max_chars=MAX_CHARS,
        height=80,
        bind="query-params",
        help="Type English; the model translates it into Chinese. Ctrl+Enter applies.",
    )
    columns = st.columns(len(EXAMPLES))
    for column, example in zip(columns, EXAMPLES):
        column.button(
            example, key=f"example_{example}", on_click=_use_example, args=(example,), use_container_width=True
        )
    return text or ""


def layer_head_pickers(
    n_layers: int, n_heads: int, container=st, allow_mean: bool = True, keys: tuple[str, str] = ("layer", "head")
) -> tuple[int, int | None]:
    """Layer (1..L, default the last) and head ("mean" or 1..H) selectors, kept in the URL.
    Returns 0-based layer and head (None = mean of heads)."""
    layers = [str(i) for i in range(1, n_layers + 1)]
    heads = (["mean"] if allow_mean else []) + [str(i) for i in range(1, n_heads + 1)]
    for key, options in zip(keys, (layers, heads)):
        if st.session_state.get(key) not in (None, *options):
            del st.session_state[key]  # e.g. a link made for a bigger model
    left, right = container.columns(2)
    layer = left.selectbox("Layer", layers, index=len(layers) - 1, key=keys[0], bind="query-params")
    head = right.selectbox(
        "Head", heads, key=keys[1], bind="query-params", help="'mean' averages the heads" if allow_mean else None
    )
    return int(layer) - 1, None if head == "mean" else int(head) - 1
