"""Reading a head atlas for the app: the shipped models' atlases (matched by the checkpoint's
SHA-256, so a replaced model never shows another model's atlas), the sentences for an on-demand
atlas, and the values of one measure laid out as (layers, heads) per kind of attention."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.io.paths import ATLAS_DIR
from core.model.registry import ATTENTION_KINDS

MEASURES = {  # label -> (how to read it from a head entry, colour scale, fixed range or None)
    # diverging around 0: some heads cost BLEU, a few even help when they are switched off
    "importance (BLEU lost when switched off)": (lambda h: -h["ablation"]["bleu_delta"], "RdBu_r", "symmetric"),
    "confidence (mean largest weight)": (lambda h: h["confidence"], "Blues", (0.0, 1.0)),
    "entropy (bits)": (lambda h: h["entropy"], "Purples", None),
    "attends to the previous token": (lambda h: h["roles"].get("previous"), "Greens", (0.0, 1.0)),
    "attends to its own position": (lambda h: h["roles"].get("same"), "Greens", (0.0, 1.0)),
    "attends to the next token": (lambda h: h["roles"].get("next"), "Greens", (0.0, 1.0)),
    "attends to <eos>/<bos> or punctuation": (lambda h: h["roles"].get("sink"), "Oranges", (0.0, 1.0)),
    "attends to the rarest word": (lambda h: h["roles"].get("rare"), "Greens", (0.0, 1.0)),
    "alignment error rate (AER, lower is better)": (
        lambda h: (h.get("alignment") or {}).get("aer"),
        "Blues_r",
        (0.0, 1.0),
    ),
}


def precomputed(sha256: str, folder: Path) -> dict[str, Any] | None:
    """The JSON in `folder` computed for exactly this checkpoint file ("model": {"sha256": …}), or None."""
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("model"), dict) and data["model"].get("sha256") == sha256:
            return data
    return None


def shipped_atlas(sha256: str, folder: Path = ATLAS_DIR) -> dict[str, Any] | None:
    """The precomputed head atlas of this checkpoint file, or None."""
    return precomputed(sha256, folder)


def atlas_sentences(folder: Path = ATLAS_DIR) -> list[str]:
    """The project's own English sentences for atlases of models that come without data."""
    lines = (folder / "sentences.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


@dataclass
class GridValues:
    values: dict[str, np.ndarray]  # kind -> (layers, heads), NaN where the measure does not apply
    hover: dict[str, list[list[str]]]
    colorscale: str
    limits: tuple[float, float] | None


def grid_values(atlas: dict[str, Any], measure: str) -> GridValues:
    read, colorscale, limits = MEASURES[measure]
    kinds = [kind for kind in ATTENTION_KINDS if any(h["kind"] == kind for h in atlas["heads"])]
    values, hover = {}, {}
    for kind in kinds:
        heads = [h for h in atlas["heads"] if h["kind"] == kind]
        layers, width = max(h["layer"] for h in heads), max(h["head"] for h in heads)
        array = np.full((layers, width), np.nan)
        texts = [["" for _ in range(width)] for _ in range(layers)]
        for h in heads:
            value = read(h)
            array[h["layer"] - 1, h["head"] - 1] = np.nan if value is None else value
            texts[h["layer"] - 1][h["head"] - 1] = describe_head(h)
        values[kind], hover[kind] = array, texts
    if limits == "symmetric":
        largest = max((float(np.nanmax(np.abs(v))) for v in values.values() if np.isfinite(v).any()), default=1.0)
        limits = (-largest, largest)
    return GridValues(values, hover, colorscale, limits)


def describe_head(head: dict[str, Any]) -> str:
    """Every number of one head, for a hover box (plotly's <br> breaks lines)."""
    roles = ", ".join(f"{name} {share:.0%}" for name, share in head["roles"].items())
    lines = [
        f"{ATTENTION_KINDS[head['kind']]} · layer {head['layer']} · head {head['head']}",
        f"switched off: BLEU {head['ablation']['bleu_delta']:+.2f}, chrF {head['ablation']['chrf_delta']:+.2f}",
        f"confidence {head['confidence']:.2f}, entropy {head['entropy']:.2f} bits",
        f"largest weight on: {roles}",
    ]
    alignment = head.get("alignment") or {}
    if alignment.get("aer") is not None:
        lines.append(f"alignment: AER {alignment['aer']:.2f} on {alignment['words']} words")
    return "<br>".join(lines)
