"""The default checkpoint in assets/: small, documented, and it really translates."""

import json
import subprocess
import sys

import pytest

from core.inference.batch import translate
from core.inference.trace import trace
from core.io.checkpoint import load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT, ROOT
from tests.helpers.fixtures import REAL_DATA
from tests.helpers.trace_schema import validate_trace


@pytest.fixture(scope="module")
def shipped():
    return load_checkpoint(DEFAULT_CHECKPOINT)


def test_shipped_checkpoint_is_small_and_carries_its_card(shipped):
    assert DEFAULT_CHECKPOINT.stat().st_size <= 25 * 1024 * 1024
    card = shipped.card
    assert card["command"].startswith("python -m core.train --data ")
    assert len(card["data"]["sha256"]) == 64 and card["split"]["test"]["english_sentences"] == 1000
    assert card["test"]["bleu"] >= 36 and card["training_minutes"] <= 30
    assert len(card["history"]) == len(card["attention_snapshots"]["epochs"])


def test_shipped_model_translates_everyday_sentences(shipped):
    sentences = ["I like to read books.", "My brother is a doctor.", "Where is the station?"]
    outputs = translate(shipped.model, shipped.pipeline, sentences)
    assert outputs[0].text.startswith("我喜欢") and "书" in outputs[0].text
    assert "医生" in outputs[1].text and "哪" in outputs[2].text
    validate_trace(trace(shipped.model, shipped.pipeline, "Tom is taller than Mary.").to_json())


@pytest.mark.slow
@pytest.mark.skipif(not REAL_DATA.exists(), reason="cmn.txt not present")
def test_evaluate_reproduces_the_recorded_test_bleu(shipped):
    result = subprocess.run(
        [sys.executable, "-m", "core.evaluate", "--data", str(REAL_DATA), "--split", "test"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    scores = json.loads(result.stdout)
    assert scores["sentences"] == 1000 and scores["bleu"] == pytest.approx(shipped.card["test"]["bleu"], abs=0.3)
