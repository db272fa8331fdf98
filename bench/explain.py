"""Benchmark 6: explaining a 10-word sentence (every generated token) on this machine's CPU, and
the Explain page in Chromium: a new sentence entered until its charts are drawn, beside a
hello-world Streamlit page's rerun in the same run."""

from __future__ import annotations

import time
from statistics import median
from typing import Any

from core.explain.attribution import METHODS, explain
from core.explain.gradients import completeness_gap
from core.explain.lens import logit_lens
from core.inference.trace import trace
from core.io.checkpoint import LoadedModel
from core.text.tokenize import tokenize_en


def ten_word_sentences(sources: list[str], count: int) -> list[str]:
    """`count` sentences of 10 words, or as near 10 as the data has (first come first)."""
    words = lambda sentence: len([t for t in tokenize_en(sentence) if t.isalpha()])  # noqa: E731
    return sorted(sources, key=lambda sentence: abs(words(sentence) - 10))[:count]


def methods(loaded: LoadedModel, sentences: list[str]) -> dict[str, Any]:
    """Median ms per sentence for each method (all steps at once), and IG's completeness gap."""
    vocab = loaded.pipeline.tgt_vocab
    times: dict[str, list[float]] = {method: [] for method in [*METHODS, "lens"]}
    gaps, steps = [], []
    for sentence in sentences:
        result = trace(loaded.model, loaded.pipeline, sentence, keep_layer_states=True)
        steps.append(len(result.steps))
        for method in METHODS:
            started = time.perf_counter()
            attribution = explain(loaded.model, result, vocab, method)
            times[method].append((time.perf_counter() - started) * 1000)
            if method == "ig":
                gaps.append(completeness_gap(attribution.source, attribution.prefix, attribution.delta))
        started = time.perf_counter()
        logit_lens(loaded.model, result, vocab)
        times["lens"].append((time.perf_counter() - started) * 1000)
    return {
        "sentences": len(sentences),
        "words_median": median(len([t for t in tokenize_en(s) if t.isalpha()]) for s in sentences),
        "steps_median": median(steps),
        "ms_median": {method: round(median(values), 1) for method, values in times.items()},
        "ig_gap_median": round(median(gaps), 4),
        "ig_gap_max": round(max(gaps), 4),
    }


def browser_enter(sentences: list[str], timeout: float = 180) -> dict[str, Any] | str:
    """Median ms from Ctrl+Enter on a new sentence to the Explain page's four charts, drawn and
    idle (nothing cached: every sentence is new to the server); a hello-world button beside it."""
    try:
        from bench.heads import hello_clicks
        from tests.helpers.browser import browser, running_app, wait_for_app
    except ImportError as err:
        return f"not measured ({err})"
    try:
        with running_app(timeout) as url, browser() as chromium:
            page = chromium.new_page(viewport={"width": 1400, "height": 3400})
            page.goto(f"{url}/explain?text=Tom+is+taller+than+Mary.")
            wait_for_app(page, charts=4, timeout=timeout * 1000)
            explain_ms = []
            for sentence in sentences:
                box = page.get_by_role("textbox", name="English sentence")
                box.fill(sentence)
                before = page.locator(".js-plotly-plot").first.inner_text()
                started = time.perf_counter()
                box.press("Control+Enter")
                # the maps' axes change to the new sentence's tokens, then the run ends with four charts
                page.wait_for_function(
                    "old => document.querySelector('.js-plotly-plot')?.innerText !== old",
                    arg=before,
                    timeout=timeout * 1000,
                )
                wait_for_app(page, charts=4, timeout=timeout * 1000)
                explain_ms.append((time.perf_counter() - started) * 1000)
        hello_ms = hello_clicks(len(sentences), timeout)
    except Exception as err:  # a missing Chromium or a stuck page must not lose the other numbers
        return f"not measured ({type(err).__name__}: {str(err).splitlines()[0][:120]})"
    return {"sentences": len(sentences), "explain_ms_median": median(explain_ms), "hello_ms_median": median(hello_ms)}
