"""Comparing models: the configuration table (Models page) and the numbers table (Compare page)."""

import pytest

from core.explain import compare
from core.io.checkpoint import load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT, GRU_CHECKPOINT


@pytest.fixture(scope="module")
def shipped():
    return {"Transformer": load_checkpoint(DEFAULT_CHECKPOINT), "GRU": load_checkpoint(GRU_CHECKPOINT)}


def test_config_table_says_what_an_architecture_does_not_have(shipped):
    table = compare.config_table(shipped)
    assert list(table.columns) == ["Transformer", "GRU"]
    assert table.loc["Architecture"].tolist() == ["Transformer", "GRU + Bahdanau attention"]
    assert table.loc["Attention heads", "Transformer"] == "4 (d_k = 64)"
    assert table.loc["Attention heads", "GRU"] == "does not apply"
    assert table.loc["GRU layers (encoder + decoder)", "Transformer"] == "does not apply"
    assert table.loc["Parameters", "GRU"] == f"{shipped['GRU'].parameter_count:,}"


def test_the_same_model_twice_gives_two_columns(shipped):
    table = compare.config_table({"A": shipped["Transformer"], "B": shipped["Transformer"]})
    assert list(table.columns) == ["A", "B"] and (table["A"] == table["B"]).all()


def test_comparison_table_reads_the_cards(shipped):
    table = compare.comparison_table(shipped, {"Transformer": 12.0, "GRU": 3.0})
    assert table.loc["test BLEU", "Transformer"] == "36.2" and table.loc["test BLEU", "GRU"] == "24.73"
    assert table.loc["greedy decoding, this sentence", "GRU"] == "3 ms (median of 5)"
