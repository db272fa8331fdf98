"""Showing things: charts in the page's type size, token chips, big translations. Every token
and every text from a model or an upload is escaped, never interpreted."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import streamlit as st

from core.figures.axes import literal, visible
from core.inference.trace import Trace
from core.text.vocab import UNK
from pages.ui.state import large_type

_CJK = re.compile(r"[\u3400-\u9fff]")
# Markdown's punctuation, and ":" so that "http://…" and "www." never become links; "$" starts LaTeX.
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
LARGE_FONT = 20


def md_literal(text: str) -> str:
    """Text from a model, a file or a user, for Streamlit's markdown (captions, messages, labels):
    every markdown character escaped, so it shows literally and never becomes a link; invisible
    and direction-changing characters shown as their code point."""
    return _MARKDOWN.sub(r"\\\1", visible(text))


def chart(figure: go.Figure, key: str, on_select: str = "ignore"):
    """A plotly chart; with large type on (for talks) its type and height grow to match. With
    on_select="rerun", a click on a point reruns the page and the chart returns the selection."""
    if large_type():
        figure.update_layout(font={"size": LARGE_FONT}, height=int((figure.layout.height or 450) * 1.5))
        figure.update_xaxes(tickfont={"size": LARGE_FONT})
        figure.update_yaxes(tickfont={"size": LARGE_FONT})
    if on_select == "ignore":
        return st.plotly_chart(figure, key=key)
    return st.plotly_chart(figure, key=key, on_select=on_select, selection_mode="points")


def large_type_css() -> None:
    st.html(
        "<style>html { font-size: 22px; }"
        "[data-testid='stMarkdownContainer'] p, [data-testid='stWidgetLabel'] p, textarea, button p"
        " { font-size: 1.2rem !important; }</style>"
    )


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
            f"font-family:monospace'>{literal(token)}</span>"
        )
    return "<div style='line-height:2'>" + "".join(parts) + "</div>"


def show_source(trace: Trace) -> None:
    st.caption("Source tokens, as the encoder sees them (unknown words in red)")
    st.html(chips(trace.source.tokens))
    for notice in trace.source.notices:
        st.warning(md_literal(notice))
    if _CJK.search(trace.source.text):
        st.warning("This model translates English into Chinese; Chinese characters in the input are unknown to it.")


def big_text(text: str) -> None:
    big_marked([(text, False)])


def big_marked(runs: list[tuple[str, bool]]) -> None:
    """A translation in large type; runs marked True are highlighted (e.g. characters that changed)."""
    size = "2.6rem" if large_type() else "1.9rem"
    body = "".join(
        f"<span style='background:#fde68a'>{literal(run)}</span>" if marked else literal(run) for run, marked in runs
    )
    st.html(f"<div style='font-size:{size};line-height:1.4'>{body or '&nbsp;'}</div>")


def side_by_side(*captioned: tuple[str, str]) -> None:
    """Translations next to each other, each under its caption (markdown: escape what is not ours)."""
    for column, (caption, text) in zip(st.columns(len(captioned)), captioned):
        with column:
            st.caption(caption)
            big_text(text)
