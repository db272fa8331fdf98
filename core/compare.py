"""Comparing a Transformer with the GRU + Bahdanau model: a live decoding time and a table of
what their cards and configs say. No Streamlit here."""

from __future__ import annotations

import statistics
import time

import pandas as pd

from core.architectures import ARCH_NAMES
from core.checkpoint import LoadedModel
from core.decoding import translate
from core.model_card import as_text, get_path


def decoding_ms(loaded: LoadedModel, text: str, repeats: int = 5) -> float:
    """Median wall time (ms) of greedy decoding of one sentence, measured now."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        translate(loaded.model, loaded.pipeline, [text])
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def comparison_table(models: dict[str, LoadedModel], timings_ms: dict[str, float]) -> pd.DataFrame:
    """One column per model: architecture, parameters, training time, test BLEU/chrF, decoding time."""
    columns = {}
    for label, loaded in models.items():
        card = loaded.card
        minutes = as_text(card.get("training_minutes"))
        columns[label] = {
            "architecture": ARCH_NAMES[loaded.config.arch],
            "parameters": f"{loaded.parameter_count:,}",
            "training time": f"{minutes} min on {as_text(card.get('device')) or '?'}" if minutes else "not in its card",
            "test BLEU": as_text(get_path(card, "test", "bleu")) or "not in its card",
            "test chrF": as_text(get_path(card, "test", "chrf")) or "not in its card",
            "greedy decoding, this sentence": f"{timings_ms[label]:.0f} ms (median of 5)",
        }
    return pd.DataFrame(columns)
