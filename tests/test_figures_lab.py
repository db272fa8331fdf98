"""Figure builders of the Positions, Masks and Models pages: shapes, labels, and clear errors."""

import json

import numpy as np
import pandas as pd
import pytest

from core.explain import positional
from core.figures import masks as figures_masks
from core.figures import position as figures_position
from core.figures import training as figures_training
from tests.helpers.apptest import shown, ticks

TOKENS = ["tom", "is", "tall", "<eos>", "<pad>"]


def as_json(figure) -> dict:
    return json.loads(figure.to_json())


def test_pe_figures_have_the_table_shape_and_labelled_axes():
    table = positional.pe_table(16, 10)
    heatmap = as_json(figures_position.pe_heatmap(table))
    assert np.array(heatmap["data"][0]["z"]).shape == (10, 16)
    assert heatmap["layout"]["yaxis"]["title"]["text"] == "position p"
    lines = as_json(figures_position.pe_dimensions(table, [0, 5], positional.wavelengths(16).tolist()))
    assert [t["name"].split(" (")[0] for t in lines["data"]] == ["dim 0", "dim 5"] and "cos" in lines["data"][1]["name"]
    assert len(lines["data"][0]["y"]) == 10
    sim = as_json(figures_position.pe_similarity(positional.similarity(table)))
    assert np.array(sim["data"][0]["z"]).shape == (10, 10)
    with pytest.raises(ValueError, match="dimension 16"):
        figures_position.pe_dimensions(table, [16], positional.wavelengths(16).tolist())
    with pytest.raises(ValueError, match="square"):
        figures_position.pe_similarity(table)
    with pytest.raises(ValueError, match="distances"):
        figures_position.distance_profile([0, 1], [1.0])


def test_embedding_figures_check_tokens():
    parts = {"a": np.ones((5, 8)), "b": -np.ones((5, 8))}
    figure = as_json(figures_position.embedding_parts(TOKENS, parts))
    assert len(figure["data"]) == 2 and ticks(figure, "yaxis") == TOKENS
    assert figure["data"][0]["zmin"] == -1 and figure["data"][1]["zmax"] == 1  # one shared scale
    bars = as_json(figures_position.vector_norms(TOKENS, {"x": [1, 2, 3, 4, 5]}))
    assert ticks(bars, "xaxis") == TOKENS
    with pytest.raises(ValueError, match="5 tokens"):
        figures_position.embedding_parts(TOKENS, {"a": np.ones((4, 8))})
    with pytest.raises(ValueError, match="4 norms"):
        figures_position.vector_norms(TOKENS, {"x": [1, 2, 3, 4]})


def test_mask_heatmap_shows_pad_on_the_axes_and_two_colours():
    mask = np.ones((5, 5), dtype=bool)
    mask[:, 4] = False
    figure = as_json(figures_masks.mask_heatmap(mask, TOKENS, TOKENS, "key padding"))
    assert ticks(figure, "xaxis")[-1] == "<pad>" and figure["data"][0]["z"][0] == [1, 1, 1, 1, 0]
    assert shown(figure["data"][0]["customdata"][0][4]) == "tom → <pad>: blocked"
    with pytest.raises(ValueError, match="does not match"):
        figures_masks.mask_heatmap(mask, TOKENS[:4], TOKENS)
    batch = as_json(figures_masks.batch_padding(mask[:2], [TOKENS, TOKENS], ["a", "b"]))
    assert shown(batch["data"][0]["text"][0][-1]) == "<pad>"


def test_score_stages_mark_masked_cells_and_fill_comparison_titles_the_leak():
    raw = np.arange(25, dtype=float).reshape(5, 5)
    mask = np.tril(np.ones((5, 5), dtype=bool))
    masked = np.where(mask, raw / 2, -np.inf)
    weights = np.exp(masked - masked.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    figure = as_json(figures_masks.score_stages(raw, raw / 2, masked, weights, TOKENS, TOKENS, 4))
    assert len(figure["data"]) == 4 and figure["data"][2]["text"][0][1] == figures_masks.MASKED_TEXT
    assert figure["data"][2]["z"][0][1] is None and figure["data"][3]["zmax"] == 1.0
    assert [a["text"] for a in figure["layout"]["annotations"]][1] == "2. ÷ √d_k = ÷ 2.00"
    comparison = as_json(
        figures_masks.fill_comparison(
            {"−∞": weights, "0": np.full((5, 5), 0.2)}, {"−∞": 0.0, "0": 0.8}, mask, TOKENS, TOKENS
        )
    )
    assert (
        "max leak 80%" in comparison["layout"]["annotations"][1]["text"] and comparison["data"][0]["text"][0][4] == "×"
    )
    with pytest.raises(ValueError, match="does not match"):
        figures_masks.score_stages(raw, raw, masked, weights, TOKENS[:3], TOKENS, 4)


def test_training_curves_plot_the_columns_present():
    history = pd.DataFrame({"epoch": [1, 2, 3], "train_loss": [3.0, 2.0, 1.5], "dev_bleu": [1.0, 5.0, 9.0]})
    figure = as_json(figures_training.training_curves(history))
    assert [t["name"] for t in figure["data"]] == ["train loss", "dev BLEU"] and figure["data"][1]["y"] == [
        1.0,
        5.0,
        9.0,
    ]
    with pytest.raises(ValueError, match="epoch"):
        figures_training.training_curves(pd.DataFrame({"loss": [1.0]}))
