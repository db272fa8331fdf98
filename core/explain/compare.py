"""Comparing a Transformer with the GRU + Bahdanau model: a live decoding time and a table of
what their cards and configs say. No Streamlit here."""

from __future__ import annotations

import statistics
import time

import pandas as pd

from core.explain.model_card import config_rows, number_text
from core.inference.batch import translate
from core.io.checkpoint import LoadedModel
from core.model.registry import spec_for


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
        card = loaded.model_card
        test = card.test
        minutes = number_text(card.training_minutes)
        columns[label] = {
            "architecture": spec_for(loaded.config.arch).title,
            "parameters": f"{loaded.parameter_count:,}",
            "training time": f"{minutes} min on {card.device or '?'}" if minutes else "not in its card",
            "test BLEU": (test and number_text(test.bleu)) or "not in its card",
            "test chrF": (test and number_text(test.chrf)) or "not in its card",
            "greedy decoding, this sentence": f"{timings_ms[label]:.0f} ms (median of 5)",
        }
    return pd.DataFrame(columns)


def config_table(models: dict[str, LoadedModel]) -> pd.DataFrame:
    """One column per model, one row per configuration fact; a fact that one architecture does not
    have says so."""
    rows = {label: dict(config_rows(loaded)) for label, loaded in models.items()}
    return pd.DataFrame(rows).fillna("does not apply")
