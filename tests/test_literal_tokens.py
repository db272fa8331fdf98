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


# A real upload whose target vocabulary holds markup: the memorised tiny model, its characters
# renamed, so "Tom likes tea." comes out as these strings on every page.
RENAMED = {
    "汤": '<a href="http://example.com/x">汤</a>',
    "姆": "<b>姆</b>",
    "喜": "a<br>b",
    "欢": "<img src=x onerror=alert(1)>",
    "茶": "</span></div>",
    "。": "\u202e。",
}
PAGES = ("translate", "attention", "heads", "explain", "positional", "masks", "models", "compare")


@pytest.fixture(scope="module")
def hostile_file(trained_tiny, tmp_path_factory):
    from core.io.checkpoint import save_checkpoint
    from core.text.pipeline import TextPipeline
    from core.text.vocab import Vocab

    model, pipeline = trained_tiny
    renamed = Vocab([RENAMED.get(token, token) for token in pipeline.tgt_vocab.itos])
    hostile = TextPipeline(pipeline.src_vocab, renamed, pipeline.zh_tokenizer)
    return save_checkpoint(tmp_path_factory.mktemp("hostile") / "hostile.safetensors", model, hostile)


def page_texts(at) -> tuple[list[str], list[str]]:
    """Every text a page hands to the browser: (HTML: charts' JSON and HTML blocks; markdown:
    markdown, captions, alerts, widget labels and options)."""
    html_texts = [c.proto.spec for c in at.get("plotly_chart")] + [h.proto.body for h in at.get("html")]
    markdown = []
    for kind in ("markdown", "caption", "warning", "info", "error", "success"):
        markdown += [element.value for element in at.get(kind)]
    for widget in ("radio", "selectbox", "select_slider", "multiselect"):
        for element in at.get(widget):
            markdown += [str(option) for option in element.options] + [str(element.label)]
    markdown += [option.content for group in at.get("button_group") for option in group.proto.options]
    return html_texts, markdown


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_streamlit_caches")
def test_an_upload_whose_vocabulary_holds_markup_is_shown_literally_on_every_page(hostile_file):
    from tests.helpers.apptest import open_app, sidebar_model

    at = open_app("models", text="Tom likes tea.")
    at.file_uploader(key="upload_file").set_value(("hostile.safetensors", hostile_file.read_bytes(), "x")).run()
    assert not at.exception and "hostile.safetensors" in sidebar_model(at)
    raw = ['<a href="http', "<b>姆", "a<br>b", "<img src"]
    for page in PAGES:
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        html_texts, markdown = page_texts(at)
        for text in html_texts:  # HTML: the tokens' markup escaped, the page's own tags balanced
            assert not any(markup in text for markup in raw) and "\u202e" not in text, (page, text[:200])
        for body in (h.proto.body for h in at.get("html")):
            for tag in ("div", "span"):
                assert body.count(f"<{tag}") == body.count(f"</{tag}>"), (page, tag, body[:200])
        for text in markdown:  # markdown: a model's text has every markup character escaped
            if any(character in text for character in "汤姆喜欢茶"):
                assert not re.search(r"(?<!\\)[<>\[\]]", text) and "\u202e" not in text, (page, text[:200])
        if page in ("translate", "explain"):  # the renamed tokens are there, escaped
            assert any("&lt;b&gt;姆&lt;/b&gt;" in text for text in html_texts), page
