"""Benchmark 3: the core call behind the Translate page (a trace with all attention and top-k),
model load time, and the memory of the app serving the shipped model."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from bench.timing import median, percentile, rss_mb, timed
from core.checkpoint import LoadedModel, load_checkpoint
from core.decoding import trace
from core.paths import ROOT

TEN_WORDS = "I think we should leave before it starts to rain."

# A fresh interpreter: memory of the model alone, without this benchmark's own tensors.
_MODEL_RSS = """
import json, sys
from bench.timing import rss_mb
before = rss_mb()
from core.checkpoint import load_checkpoint
from core.decoding import trace
loaded = load_checkpoint(sys.argv[1])
trace(loaded.model, loaded.pipeline, sys.argv[2])
print(json.dumps({"python_and_imports": before, "after_load_and_trace": rss_mb()}))
"""


def trace_times(loaded: LoadedModel, sentence: str, runs: int) -> list[float]:
    for _ in range(3):  # warm-up: first calls allocate and pick kernels
        trace(loaded.model, loaded.pipeline, sentence)
    return [timed(lambda: trace(loaded.model, loaded.pipeline, sentence))[1] for _ in range(runs)]


def app_server_rss(timeout: float = 120) -> dict[str, float] | str:
    """RSS of `streamlit run app.py` after a browser has rendered the Translate page, or the reason
    it could not be measured (the browser harness lives with the tests and needs Chromium)."""
    try:
        from tests.browser import browser, serving_app, wait_for_app
    except ImportError as err:
        return f"not measured ({err})"
    try:
        with serving_app(timeout) as (url, server), browser() as chromium:
            idle = rss_mb(server.pid)
            page = chromium.new_page()
            page.goto(url)
            wait_for_app(page, charts=1)
            served = rss_mb(server.pid)
            page.close()
            return {"server_started": idle, "after_first_page": served}
    except Exception as err:  # the benchmark reports what failed and goes on
        return f"not measured ({type(err).__name__}: {err})"


def run(checkpoint: str, runs: int, measure_server: bool) -> dict[str, Any]:
    loads = [timed(lambda: load_checkpoint(checkpoint))[1] for _ in range(3)]
    loaded = load_checkpoint(checkpoint)
    times = trace_times(loaded, TEN_WORDS, runs)
    probe = subprocess.run(
        [sys.executable, "-c", _MODEL_RSS, checkpoint, TEN_WORDS], cwd=ROOT, capture_output=True, text=True, check=True
    )
    result = trace(loaded.model, loaded.pipeline, TEN_WORDS)
    return {
        "sentence": TEN_WORDS,
        "source_tokens": len(result.source.tokens),
        "output_tokens": len(result.steps),
        "runs": runs,
        "trace_ms_p50": percentile(times, 50),
        "trace_ms_p90": percentile(times, 90),
        "trace_json_kb": len(json.dumps(result.to_json())) / 1024,
        "load_ms_median": median(loads),
        "model_process_rss_mb": json.loads(probe.stdout),
        "app_server_rss_mb": app_server_rss() if measure_server else "not measured (--no-browser)",
    }
