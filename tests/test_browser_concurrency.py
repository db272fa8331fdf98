"""Four people on one running app at once: each browser context is its own Streamlit session, all
sharing the one cached shipped model. Each must see its own sentence's translation and charts, and
a checkpoint uploaded in one session must change that session's model only."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from core.inference.batch import translate
from core.inference.source import prepare_source
from core.io.checkpoint import load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT
from tests.helpers.browser import assert_no_errors, browser, go_to, needs_chromium, running_app, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.reliability, pytest.mark.slow, needs_chromium]

SESSIONS = 4
FIRST_SENTENCES = (
    "Where is the train station?",
    "My brother bought a new car last week.",
    "It is raining today, so I will stay at home.",
    "Mary is taller than her mother.",
)
# Typed after the upload; the first one on which the uploaded model and the shipped one disagree
# is used (the test computes both translations, nothing here is assumed about them).
SECOND_SENTENCES = ("Tom likes tea.", "Mary sees the cat.", "We like music.", "They see the river.", "I like books.")
TIMEOUT_MS = 90_000


def translations(checkpoint: Path, sentences: tuple[str, ...]) -> dict[str, str]:
    """What the core gives for each sentence with this checkpoint: what the page must show."""
    loaded = load_checkpoint(checkpoint)
    return {s: t.text for s, t in zip(sentences, translate(loaded.model, loaded.pipeline, list(sentences)))}


def source_tokens(checkpoint: Path, text: str) -> list[str]:
    loaded = load_checkpoint(checkpoint)
    return prepare_source(loaded.model, loaded.pipeline, text).tokens


def distinctive(*texts: str) -> bool:
    """Texts a page can be checked for: all different, none inside another, none shorter than 3 characters
    (a half-trained model may answer just "。", which any page contains)."""
    return (
        len(set(texts)) == len(texts)
        and all(len(t) >= 3 for t in texts)
        and not any(a in b for a in texts for b in texts if a != b)
    )


def type_all(pages: list, sentences: list[str]) -> None:
    """Fill every page's sentence box first, then apply them all, so the sessions run together."""
    boxes = [page.get_by_role("textbox", name="English sentence") for page in pages]
    for box, sentence in zip(boxes, sentences):
        box.fill(sentence)
    for box in boxes:
        box.press("Control+Enter")


def wait_for_translation(page, expected: str) -> str:
    """Wait until the page shows `expected` and its charts are drawn; return the page's text."""
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=expected, timeout=TIMEOUT_MS)
    wait_for_app(page, charts=3, timeout=TIMEOUT_MS)
    return page.locator("body").inner_text()


VISIBLE_TICKS = """i => [...(document.querySelectorAll('.js-plotly-plot')[i]?.querySelectorAll('.xtick text') ?? [])]
    .filter(e => getComputedStyle(e).display !== 'none').map(e => e.textContent)"""


def assert_tick_labels(page, chart: int, expected: list[str]) -> None:
    """The x-axis labels a person sees on a chart (plotly hides, with display: none, a label that would
    stick out of the figure) are `expected`; waits while plotly is still drawing."""
    same = "(a, b) => a.length === b.length && a.every((x, k) => x === b[k])"
    try:
        page.wait_for_function(
            f"([i, want]) => ({same})(({VISIBLE_TICKS})(i), want)", arg=[chart, expected], timeout=30_000
        )
    except PlaywrightTimeout:
        pass  # the assertion below says what is shown instead
    assert page.evaluate(VISIBLE_TICKS, chart) == expected


def sidebar(page) -> str:
    return page.locator("[data-testid='stSidebar']").inner_text()


def test_four_sessions_at_once_each_get_their_own_translation_and_model(trained_checkpoint, report_result):
    shipped = translations(DEFAULT_CHECKPOINT, FIRST_SENTENCES + SECOND_SENTENCES)
    uploaded = translations(trained_checkpoint, SECOND_SENTENCES)
    firsts = [shipped[s] for s in FIRST_SENTENCES]
    assert distinctive(*firsts), f"the translations must tell the pages apart: {firsts}"
    second = next((s for s in SECOND_SENTENCES if distinctive(uploaded[s], shipped[s], *firsts)), None)
    assert second, f"no sentence that the two models translate distinguishably: {uploaded} vs {shipped}"

    with running_app() as url, browser() as chromium:
        contexts = [chromium.new_context(viewport={"width": 1400, "height": 1800}) for _ in range(SESSIONS)]
        pages = [context.new_page() for context in contexts]
        for page in pages:
            page.goto(url)
        for page in pages:
            wait_for_app(page, charts=3, timeout=TIMEOUT_MS)
            assert "Model: Shipped Transformer" in sidebar(page)

        # 1. Four different sentences at the same moment.
        started = time.monotonic()
        type_all(pages, list(FIRST_SENTENCES))
        for page, sentence, expected in zip(pages, FIRST_SENTENCES, firsts):
            body = wait_for_translation(page, expected)
            others = [t for t in firsts if t != expected]
            assert not any(t in body for t in others), f"another session's translation shows beside {expected}"
            # The cross-attention chart is over this sentence's tokens, each bar visibly labelled.
            assert_tick_labels(page, 1, source_tokens(DEFAULT_CHECKPOINT, sentence))
            assert page.get_by_role("textbox", name="English sentence").input_value() == sentence
            assert_no_errors(page)
        together_s = time.monotonic() - started

        # 2. Session 0 uploads a checkpoint on the Models page: it becomes that session's model.
        mine, others = pages[0], pages[1:]
        go_to(mine, "Models", "Models", charts=2, timeout=TIMEOUT_MS)
        mine.locator("input[type='file']").set_input_files(str(trained_checkpoint))
        mine.wait_for_function(
            "n => document.body.innerText.includes('Loaded ' + n)", arg=trained_checkpoint.name, timeout=TIMEOUT_MS
        )
        assert f"Model: {trained_checkpoint.name}" in sidebar(mine)
        assert_no_errors(mine)
        go_to(mine, "Translate", "Translate, step by step", charts=3, timeout=TIMEOUT_MS)

        # 3. All four type the same sentence at once: only session 0 uses the upload.
        type_all(pages, [second] * SESSIONS)
        body = wait_for_translation(mine, uploaded[second])
        assert f"Model: {trained_checkpoint.name}" in sidebar(mine)
        assert shipped[second] not in body.replace(uploaded[second], "")
        assert_no_errors(mine)
        for page in others:
            body = wait_for_translation(page, shipped[second])
            assert uploaded[second] not in body.replace(shipped[second], "")
            assert "Model: Shipped Transformer" in sidebar(page)
            assert_no_errors(page)

        # 4. The other sessions type their first sentence again: still the shipped model's translation.
        type_all(others, list(FIRST_SENTENCES[1:]))
        for page, expected in zip(others, firsts[1:]):
            wait_for_translation(page, expected)
            assert "Model: Shipped Transformer" in sidebar(page)
            assert_no_errors(page)
        for context in contexts:
            context.close()
    report_result(
        "browser concurrency",
        f"{SESSIONS} browser sessions typed at once: each showed its own translation and charts "
        f"({together_s:.1f} s for all four); an upload in one session changed only that session's model "
        f"(uploaded: {json.dumps(uploaded[second], ensure_ascii=False)}, shipped: "
        f"{json.dumps(shipped[second], ensure_ascii=False)} for {second!r}); no exceptions on any page",
    )
