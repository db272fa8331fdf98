"""A tiny model really learns: it memorises 64 real sentence pairs to exact match."""

import pytest

from core.inference.batch import translate
from core.text.data import read_pairs
from core.text.tokenize import to_simplified
from tests.helpers.fixtures import REAL_DATA, synthetic_pairs, train_tiny

pytestmark = [pytest.mark.slow]


def sixty_four_pairs():
    if not REAL_DATA.exists():
        return synthetic_pairs()[:64]
    pairs, _ = read_pairs(REAL_DATA)
    seen, chosen = set(), []
    for pair in pairs[1000:]:  # past the one-word greetings; one translation per English sentence
        if pair.en not in seen:
            seen.add(pair.en)
            chosen.append(pair)
        if len(chosen) == 64:
            return chosen
    raise AssertionError("not enough pairs")


def test_tiny_model_memorises_64_pairs_exactly():
    pairs = sixty_four_pairs()
    model, pipeline = train_tiny(pairs, steps=600, d_model=64, d_ff=128)
    outputs = translate(model, pipeline, [p.en for p in pairs])
    exact = sum(out.text == to_simplified(p.zh) for out, p in zip(outputs, pairs))
    assert exact == 64, [(p.en, p.zh, o.text) for p, o in zip(pairs, outputs) if o.text != p.zh][:5]
