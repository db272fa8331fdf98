"""Every figure builder shows tokens literally: plotly's pseudo-HTML in a token (links, bold, line
breaks, images), entities, bidi overrides and invisible characters never reach a figure as markup."""

import html
import json
import re

import numpy as np
import pandas as pd
import pytest

from core.figures import attention, explain, heads, masks, position, training
from core.figures.axes import TICK_CHARS, literal

HOSTILE = [
    '<a href="http://example.com/x">我</a>',
    "<b>喜</b>",
    "a<br>b",
    "<img src=x onerror=alert(1)>",
    "</span></div>",
    "&lt;not an entity&gt;",
    "\u202eevil\u202c",
    "zero\u200bwidth",
    "x" * 10_000,
    "",
    " ",
    "<b>喜</b>",  # a duplicate
]
RAW = ["<a", "<b>", "<img", "</span", "a<br>b", "\u202e", "\u200b"]


def strings(value):
    """Every string inside a figure's JSON."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from strings(item)


def assert_literal(figure) -> None:
    data = json.loads(figure.to_json())
    for text in strings(data):
        assert not any(raw in text for raw in RAW), text[:120]
    token_axes = [
        axis["ticktext"]
        for axis in data["layout"].values()
        if isinstance(axis, dict) and len(axis.get("ticktext", [])) == len(HOSTILE)
    ]
    for labels in token_axes:  # every token's axis label reads back as the token itself
        for label, token in zip(labels, HOSTILE):
            if len(token) <= TICK_CHARS and not any(c in token for c in "\u202e\u202c\u200b"):
                assert html.unescape(label) == token


def test_literal_escapes_markup_and_shows_hidden_characters():
    assert literal("<b>喜</b>") == "&lt;b&gt;喜&lt;/b&gt;" and html.unescape(literal("&lt;")) == "&lt;"
    assert literal("\u202eevil") == "⟨U+202E⟩evil" and literal("x" * 50, 10) == "x" * 10 + "…"


@pytest.mark.parametrize(
    "build",
    [
        lambda n: attention.attention_heatmap(np.full((n, n), 1 / n), HOSTILE, HOSTILE, title=HOSTILE[0]),
        lambda n: attention.heads_grid(np.full((2, 2, n, n), 1 / n), HOSTILE, HOSTILE, title=HOSTILE[1]),
        lambda n: attention.layer_means(np.full((2, 2, n, n), 1 / n), HOSTILE, HOSTILE, title=HOSTILE[2]),
        lambda n: attention.topk_bar([(t, 0.1) for t in HOSTILE], HOSTILE[0], title=f"chose “{HOSTILE[3]}”"),
        lambda n: attention.attention_bars(np.full(n, 1 / n), HOSTILE, title=HOSTILE[4]),
        lambda n: masks.mask_heatmap(np.ones((n, n), dtype=bool), HOSTILE, HOSTILE, HOSTILE[0]),
        lambda n: masks.batch_padding(np.ones((1, n), dtype=bool), [HOSTILE], [HOSTILE[1]], HOSTILE[2]),
        lambda n: masks.score_stages(*(np.zeros((n, n)),) * 4, HOSTILE, HOSTILE, 64),
        lambda n: masks.fill_comparison({"0": np.zeros((n, n))}, {"0": 0.0}, np.ones((n, n), bool), HOSTILE, HOSTILE),
        lambda n: position.embedding_parts(HOSTILE, {"sum": np.zeros((n, 4))}, HOSTILE[6]),
        lambda n: position.vector_norms(HOSTILE, {"norm": [1.0] * n}, HOSTILE[0]),
        lambda n: position.pe_heatmap(np.zeros((4, 4)), HOSTILE[0]),
        lambda n: training.training_curves(pd.DataFrame({"epoch": [1], "train_loss": [1.0]}), HOSTILE[1]),
        lambda n: heads.pruning_curve([0, 1], [30.0, 29.0], 30.0, HOSTILE[2]),
        lambda n: explain.relevance_grid({HOSTILE[0]: np.eye(n), "ig": -np.eye(n)}, {"ig"}, HOSTILE, HOSTILE),
        lambda n: explain.step_bars({HOSTILE[1]: np.ones(n) / n}, HOSTILE, HOSTILE[2]),
        lambda n: explain.source_share_strip(np.full(n, 0.4), HOSTILE, 0.5, 1, HOSTILE[3]),
        lambda n: explain.lens_table([[(t, 0.1) for t in HOSTILE]] * 2, HOSTILE[4]),
    ],
)
def test_every_figure_builder_shows_hostile_tokens_literally(build):
    assert_literal(build(len(HOSTILE)))


def test_markdown_text_from_models_and_users_is_shown_literally():
    from pages.ui.display import md_literal

    for text in ("[click](http://example.com)", "www.example.com", "**bold** _it_ `code`", "$x^2$", "<b>b</b>", "# h"):
        escaped = md_literal(text)
        assert re.sub(r"\\(.)", r"\1", escaped) == text  # unescaping gives the text back, character for character
        assert "http:" not in escaped and "](" not in escaped and "**" not in escaped
        assert not re.search(r"(?<!\\)[$<>\[\]*_`]", escaped)  # every markdown character is escaped
