"""Clocks, percentiles, process memory and a description of the machine, for the benchmark tables."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
import torch

T = TypeVar("T")


def timed(function: Callable[[], T]) -> tuple[T, float]:
    """(result, milliseconds of wall time)."""
    started = time.perf_counter()
    result = function()
    return result, (time.perf_counter() - started) * 1000


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated q-th percentile (q in 0..100); NaN for no values."""
    return float(np.percentile(values, q)) if len(values) else float("nan")


def stats_ms(seconds: Sequence[float]) -> str:
    """'p50 … ms, p90 … ms, max … ms' for durations in seconds (the reliability suites' summaries)."""
    ms = [1000 * s for s in seconds]
    return f"p50 {percentile(ms, 50):.0f} ms, p90 {percentile(ms, 90):.0f} ms, max {max(ms):.0f} ms"


def rss_mb(pid: int | str = "self") -> float:
    """Resident set size of a process in MiB, from /proc (Linux)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, str]:
    """What the numbers were measured on: they mean little without it."""
    device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return {
        "cpu": cpu_name(),
        "cores usable": str(len(os.sched_getaffinity(0))),
        "torch threads": str(torch.get_num_threads()),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "gpu": device,
    }
