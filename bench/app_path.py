"""Benchmark 3: the core call behind the Translate page (a trace with all attention and top-k),
model load time, and the memory of the app serving the shipped model."""

from __future__ import annotations

import json
import subprocess
import sys
from statistics import median
from typing import Any

from bench.timing import percentile, rss_mb, timed
from core.inference.trace import trace
from core.io.checkpoint import LoadedModel, load_checkpoint
from core.io.paths import ROOT

TEN_WORDS = "I think we should leave before it starts to rain."

# A fresh interpreter used as the app's server uses torch: the model loaded and the traces run in
# threads other than the main one, as Streamlit runs every session's script.
_AS_IN_THE_APP = """
import json, sys, threading
from bench.timing import rss_mb, timed
before = rss_mb()
from bench.app_path import trace_times
from core.io.checkpoint import load_checkpoint
out = {"python_and_torch_mb": before}
def work():
    loaded, out["load_ms"] = timed(lambda: load_checkpoint(sys.argv[1]))
    out["trace_ms"] = trace_times(loaded, sys.argv[2], int(sys.argv[3]))
worker = threading.Thread(target=work)
worker.start()
worker.join()
out["model_loaded_mb"] = rss_mb()
print(json.dumps(out))
"""


def trace_times(loaded: LoadedModel, sentence: str, runs: int) -> list[float]:
    for _ in range(3):  # warm-up: first calls allocate and pick kernels
        trace(loaded.model, loaded.pipeline, sentence)
    return [timed(lambda: trace(loaded.model, loaded.pipeline, sentence))[1] for _ in range(runs)]


def app_server_rss(timeout: float = 120) -> dict[str, float] | str:
    """RSS of `streamlit run app.py` after a browser has rendered the Translate page, or the reason
    it could not be measured (the browser harness lives with the tests and needs Chromium)."""
    try:
        from tests.helpers.browser import browser, serving_app, wait_for_app
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
    """The trace measured twice: as the app runs it (a fresh process, the model loaded and used in
    script threads), and in this process on the main thread."""
    command = [sys.executable, "-c", _AS_IN_THE_APP, checkpoint, TEN_WORDS, str(runs)]
    app = json.loads(subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True).stdout)
    loads = [timed(lambda: load_checkpoint(checkpoint))[1] for _ in range(3)]
    loaded = load_checkpoint(checkpoint)
    default = trace_times(loaded, TEN_WORDS, runs)
    result = trace(loaded.model, loaded.pipeline, TEN_WORDS)
    return {
        "sentence": TEN_WORDS,
        "source_tokens": len(result.source.tokens),
        "output_tokens": len(result.steps),
        "runs": runs,
        "app_trace_ms_p50": percentile(app["trace_ms"], 50),
        "app_trace_ms_p90": percentile(app["trace_ms"], 90),
        "default_trace_ms_p50": percentile(default, 50),
        "default_trace_ms_p90": percentile(default, 90),
        "trace_json_kb": len(json.dumps(result.to_json())) / 1024,
        "app_load_ms": app["load_ms"],
        "load_ms_median": median(loads),
        "rss_python_and_torch_mb": app["python_and_torch_mb"],
        "rss_model_loaded_mb": app["model_loaded_mb"],
        "app_server_rss_mb": app_server_rss() if measure_server else "not measured (--no-browser)",
    }
