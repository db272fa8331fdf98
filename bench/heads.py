"""Benchmark 5: the head atlas over held-out sentences, and live ablation in the browser: a click
on a head until the re-translated page is drawn, beside a hello-world Streamlit page's rerun."""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from core.explain.heads import head_atlas, summarize
from core.io.checkpoint import LoadedModel

HELLO = 'import streamlit as st\nn = st.session_state.setdefault("n", 0)\nif st.button("Again"):\n    st.session_state.n += 1\nst.write(f"clicked {st.session_state.n}")\n'


def atlas(loaded: LoadedModel, sources: list[str], references: list[list[str]]) -> dict[str, Any]:
    started = time.perf_counter()
    result = head_atlas(loaded.model, loaded.pipeline, sources, references, {"model": {}, "split": "dev"})
    return {"sentences": result["sentences"], "seconds": round(time.perf_counter() - started, 1), **summarize(result)}


def browser_toggles(toggles: int, timeout: float = 120) -> dict[str, Any] | str:
    """Median ms from a click to the finished rerun: a head on the Heads page, and a button on a
    hello-world page, in the same run of Chromium."""
    try:
        from tests.helpers.browser import browser, running_app, wait_for_app
    except ImportError as err:
        return f"not measured ({err})"
    try:
        with running_app(timeout) as url, browser() as chromium:
            page = chromium.new_page(viewport={"width": 1400, "height": 2400})
            page.goto(f"{url}/heads?text=Tom+is+taller+than+Mary.")
            wait_for_app(page, charts=3)
            heads_ms = []
            for index in range(toggles):
                started = time.perf_counter()
                page.get_by_role("button", name="head 4").nth(8).click()  # cross-attention, layer 3, head 4
                expected = "1 of 36 heads switched off" if index % 2 == 0 else "All heads on"
                page.get_by_role("heading", name=expected).wait_for(timeout=timeout * 1000)
                page.wait_for_selector("[data-testid='stStatusWidget']", state="detached", timeout=timeout * 1000)
                heads_ms.append((time.perf_counter() - started) * 1000)
        hello_ms = hello_clicks(toggles, timeout)
    except Exception as err:  # a missing Chromium or a stuck page must not lose the other numbers
        return f"not measured ({type(err).__name__}: {str(err).splitlines()[0][:120]})"
    return {"toggles": toggles, "heads_ms_median": median(heads_ms), "hello_ms_median": median(hello_ms)}


def hello_clicks(clicks: int, timeout: float = 120) -> list[float]:
    """ms from a click to the finished rerun of a hello-world Streamlit page, `clicks` times: the
    floor any Streamlit interaction pays on this machine."""
    from tests.helpers.browser import browser, serving_app

    with _hello_app() as script, serving_app(timeout, script) as (hello_url, _), browser() as chromium:
        page = chromium.new_page()
        page.goto(hello_url)
        page.get_by_text("clicked 0").wait_for(timeout=timeout * 1000)
        hello_ms = []
        for index in range(1, clicks + 1):
            started = time.perf_counter()
            page.get_by_role("button", name="Again").click()
            page.get_by_text(f"clicked {index}").wait_for(timeout=timeout * 1000)
            hello_ms.append((time.perf_counter() - started) * 1000)
    return hello_ms


@contextlib.contextmanager
def _hello_app():
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "hello.py"
        script.write_text(HELLO, encoding="utf-8")
        yield script
