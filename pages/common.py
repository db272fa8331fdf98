"""Streamlit glue shared by the pages: the cached model, the sentence box, display helpers.

Session-state keys shared between pages (each is also a URL query parameter, so a link
reproduces the view):
- "text": the English sentence, used by every page.
- "step": the decoding step on the Translate page (1-based).
- "layer", "head": "mean" or a 1-based number; "kind": encoder / decoder / cross.
"""

from __future__ import annotations

import contextlib
import html
import re
import runpy
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from core import compare, mask_lab, model_card
from core.checkpoint import LoadedModel
from core.decoding import EmptyInputError, Trace, trace, translate
from core.paths import ROOT
from core.text import UNK
from pages.session_models import ACTIVE_KEY, active_label, active_model

SENTENCE_KEY = "text"
MAX_CHARS = 5000
EXAMPLES = (
    "I like to read books.",
    "Where is the train station?",
    "Tom is taller than Mary.",
    "It is raining today, so I will stay at home.",
    "My brother bought a new car last week.",
)
_CJK = re.compile(r"[\u3400-\u9fff]")
_ROUTED: ContextVar[bool] = ContextVar("translucent_routed", default=False)


@contextlib.contextmanager
def routed() -> Iterator[None]:
    """app.py runs the chosen page inside this, so the page knows the router ran."""
    token = _ROUTED.set(True)
    try:
        yield
    finally:
        _ROUTED.reset(token)


def ensure_router() -> None:
    """On a fresh server, a deep link such as /attention?text=... is run by Streamlit's legacy
    pages/ mode without app.py (no wide layout, wrong sidebar). Hand such a run to the router,
    which then runs this page properly."""
    if not _ROUTED.get():
        runpy.run_path(str(ROOT / "app.py"), run_name="__main__")
        st.stop()


# Bounded by count, not bytes: a trace is 7-27 KB for everyday sentences but up to ~2 MB for a
# 100-token input, so 128 entries keep the worst case near 250 MB; a miss costs ~20 ms.
@st.cache_data(max_entries=128, show_spinner=False)
def cached_trace(
    _loaded: LoadedModel,
    model_key: str,
    text: str,
    forced: tuple[str, ...] = (),
    top_k: int = 5,
    source_positions: str = "normal",
) -> Trace:
    return trace(_loaded.model, _loaded.pipeline, text, forced=forced, top_k=top_k, source_positions=source_positions)


@st.cache_data(max_entries=64, show_spinner=False)
def _mask_batch(_loaded: LoadedModel, model_key: str, sentences: tuple[str, ...]) -> mask_lab.MaskBatch:
    return mask_lab.build_batch(_loaded.model, _loaded.pipeline, list(sentences))


def cached_mask_batch(loaded: LoadedModel, model_key: str, sentences: tuple[str, ...]) -> mask_lab.MaskBatch | None:
    """The batch for the masks page, or None after saying why there is none."""
    try:
        return _mask_batch(loaded, model_key, sentences)
    except ValueError as err:
        st.info(f"The second sentence cannot be used: {err}")
    return None


@st.cache_data(max_entries=128, show_spinner=False)
def cached_score_pipeline(
    _loaded: LoadedModel, model_key: str, sentences: tuple[str, ...], kind: str, layer: int, head: int, row: int
) -> mask_lab.ScorePipeline:
    batch = _mask_batch(_loaded, model_key, sentences)
    return mask_lab.score_pipeline(_loaded.model, batch, kind, layer, head, row)


@st.cache_data(max_entries=256, show_spinner="Timing the model…")
def cached_decoding_ms(_loaded: LoadedModel, model_key: str, text: str) -> float:
    """Measured once per model and sentence, not on every rerun (a layer or head change)."""
    return compare.decoding_ms(_loaded, text)


@st.cache_data(max_entries=512, show_spinner=False)
def cached_beam(_loaded: LoadedModel, model_key: str, text: str, beam: int) -> str:
    return translate(_loaded.model, _loaded.pipeline, [text], beam_size=beam)[0].text


def keep_shared_state() -> None:
    """Widget values vanish when a page without that widget runs; re-storing keeps the sentence
    and the chosen model when the user switches pages."""
    for key in (SENTENCE_KEY, ACTIVE_KEY):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def page_setup() -> bool:
    """Sidebar controls common to every page; returns whether large type is on."""
    ensure_router()
    keep_shared_state()
    large = st.sidebar.toggle("Large type (for talks)", key="large_type", bind="query-params")
    if large:
        st.html(
            "<style>html { font-size: 22px; }"
            "[data-testid='stMarkdownContainer'] p, [data-testid='stWidgetLabel'] p, textarea, button p"
            " { font-size: 1.2rem !important; }</style>"
        )
    loaded, _ = active_model()
    st.sidebar.caption(f"Model: {active_label()} (choose on the Models page). {model_card.summary(loaded)}")
    if scores := model_card.test_scores(loaded.card):
        st.sidebar.caption(scores)
    return large


def transformer_only(loaded: LoadedModel, what: str) -> None:
    """Stop a page that has nothing to show for the GRU model, saying why."""
    if loaded.config.arch != "transformer":
        st.info(
            f"The active model is a GRU with Bahdanau attention: it has no {what}. "
            "Choose a Transformer on the Models page, or compare the two on the Compare page."
        )
        st.stop()


def styled(figure: go.Figure, large: bool) -> go.Figure:
    """Larger type (and room for it) when presenting."""
    if large:
        figure.update_layout(font={"size": 20}, height=int((figure.layout.height or 450) * 1.5))
        figure.update_xaxes(tickfont={"size": 20})
        figure.update_yaxes(tickfont={"size": 20})
    return figure


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


def get_trace(loaded: LoadedModel, model_key: str, text: str, forced: tuple[str, ...] = ()) -> Trace | None:
    """The trace, or None after telling the user why there is none (never a traceback)."""
    try:
        return cached_trace(loaded, model_key, text, forced)
    except EmptyInputError as err:
        st.info(f"{err} Or pick one of the examples.")
    except ValueError as err:
        st.error(f"This input cannot be translated: {err}")
    return None


def chips(tokens: list[str], highlight: int | None = None, mark_unknown: bool = True) -> str:
    """Tokens as escaped HTML chips; <unk> in red, the highlighted position in blue."""
    parts = []
    for index, token in enumerate(tokens):
        if mark_unknown and token == UNK:
            style = "background:#fde2e1;border:1px solid #e5534b;color:#a40e26"
        elif index == highlight:
            style = "background:#1f77b4;color:white"
        elif token.startswith("<") and token.endswith(">"):
            style = "background:#f0f0f0;color:#666"
        else:
            style = "background:#e8f0fe;color:#123"
        parts.append(
            f"<span style='{style};border-radius:0.4em;padding:0.15em 0.45em;margin:0.12em;display:inline-block;"
            f"font-family:monospace'>{html.escape(token)}</span>"
        )
    return "<div style='line-height:2'>" + "".join(parts) + "</div>"


def show_source(trace_: Trace) -> None:
    st.caption("Source tokens, as the encoder sees them (unknown words in red)")
    st.html(chips(trace_.source.tokens))
    for notice in trace_.source.notices:
        st.warning(notice)
    if _CJK.search(trace_.source.text):
        st.warning("This model translates English into Chinese; Chinese characters in the input are unknown to it.")


@dataclass
class PageContext:
    large: bool  # large type on
    loaded: LoadedModel
    model_key: str
    trace: Trace


def start_page(title: str) -> PageContext:
    """What every page begins with: sidebar, title, the sentence box and its trace (or a stop)."""
    large = page_setup()
    loaded, model_key = active_model()
    st.title(title)
    text = sentence_box()
    trace_ = get_trace(loaded, model_key, text)
    if trace_ is None:
        st.stop()
    show_source(trace_)
    return PageContext(large, loaded, model_key, trace_)


def side_by_side(large: bool, *captioned: tuple[str, str]) -> None:
    """Translations next to each other, each under its caption."""
    for column, (caption, text) in zip(st.columns(len(captioned)), captioned):
        with column:
            st.caption(caption)
            big_text(text, large)


def big_text(text: str, large: bool) -> None:
    size = "2.6rem" if large else "1.9rem"
    st.html(f"<div style='font-size:{size};line-height:1.4'>{html.escape(text) or '&nbsp;'}</div>")


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
