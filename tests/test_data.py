"""Reading, splitting and batching the data."""

import random

import pytest

from core.text.batches import bucket_batches, iterate_batches, pad_batch
from core.text.data import Pair, group_references, read_pairs, split_by_english
from tests.helpers.fixtures import REAL_DATA, synthetic_pairs, write_pairs


def test_malformed_lines_are_counted_not_silently_dropped(tmp_path):
    path = write_pairs(
        tmp_path / "pairs.txt", synthetic_pairs()[:5], ("no tab here", "a\tb\tc\td", "\t空的英文", "", "two\t两个")
    )
    pairs, report = read_pairs(path)
    assert len(pairs) == 6 and report.pairs == 6  # 5 + the 2-field line
    assert report.malformed == 3 and len(report.malformed_examples) == 3
    assert "3 malformed" in report.summary()


def test_split_has_no_english_sentence_in_two_splits_and_is_deterministic():
    pairs = synthetic_pairs() + [Pair("Tom likes tea.", "汤姆爱喝茶。")]  # a second translation
    split = split_by_english(pairs, dev_size=8, test_size=10, seed=3)
    sets = [{p.en for p in part} for part in (split.train, split.dev, split.test)]
    assert not (sets[0] & sets[1]) and not (sets[0] & sets[2]) and not (sets[1] & sets[2])
    assert len(sets[1]) == 8 and len(sets[2]) == 10
    assert sum(len(part) for part in (split.train, split.dev, split.test)) == len(pairs)
    again = split_by_english(list(reversed(pairs)), dev_size=8, test_size=10, seed=3)
    assert {p.en for p in again.test} == sets[2]


@pytest.mark.skipif(not REAL_DATA.exists(), reason="cmn.txt not present")
def test_real_data_split_has_no_leakage():
    pairs, report = read_pairs(REAL_DATA)
    split = split_by_english(pairs, 500, 1000, 42)
    train, dev, test = ({p.en for p in part} for part in (split.train, split.dev, split.test))
    assert not (train & test) and not (train & dev) and not (dev & test)
    assert len(test) == 1000 and report.malformed == 0


def test_references_are_grouped_per_english_sentence():
    sources, refs = group_references([Pair("Hi.", "嗨。"), Pair("Run.", "跑！"), Pair("Hi.", "你好。")])
    assert sources == ["Hi.", "Run."] and refs == [["嗨。", "你好。"], ["跑！"]]


def test_bucketed_batches_respect_the_token_budget_and_cover_everything():
    rng = random.Random(0)
    lengths = [rng.randint(3, 40) for _ in range(500)]
    batches = bucket_batches(lengths, 400, random.Random(1))
    assert sorted(i for b in batches for i in b) == list(range(500))
    assert all(max(lengths[i] for i in b) * len(b) <= 400 for b in batches)
    spread = sum(max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in batches) / len(batches)
    assert spread < 5  # similar lengths share a batch


def test_batches_are_padded_with_pad_id():
    padded = pad_batch([[5, 6, 7], [8]])
    assert padded.tolist() == [[5, 6, 7], [8, 0, 0]]
    examples = [([5, 3], [2, 9, 3]), ([5, 6, 7, 3], [2, 3])]
    src, tgt = next(iterate_batches(examples, 100))
    assert src.shape == (2, 4) and tgt.shape == (2, 3)


def test_a_checkpoints_split_is_recreated_from_its_card():
    from core.io.card import DataInfo, ModelCard
    from core.training.data import card_split

    pairs = synthetic_pairs()
    card = ModelCard(train_config={"dev_size": 3, "test_size": 4, "seed": 5}, data=DataInfo(limit_pairs=30))
    split = card_split(pairs, card)
    expected = split_by_english(pairs[:30], 3, 4, 5)  # --limit-pairs: the run saw only the first 30 pairs
    assert (split.train, split.dev, split.test) == (expected.train, expected.dev, expected.test)
    with pytest.raises(ValueError, match="records no split"):
        card_split(pairs, ModelCard())
