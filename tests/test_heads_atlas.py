"""The head atlas: alignment scoring on a hand-made example, role statistics on hand-made attention,
and the analyze CLI on a tiny model (schema-valid; each head's deltas are real BLEU differences)."""

import json

import jsonschema
import numpy as np
import pytest
import torch

from core.analyze import main as analyze
from core.explain.alignment import AlignmentCounts, reference_links, score_attention
from core.explain.heads import _accumulate, _HeadSums, ablation_scores, decode_corpus, summarize
from core.io.checkpoint import load_checkpoint
from core.io.paths import ROOT
from core.model.intervention import parse_heads
from core.training.data import recorded_split

LEXICON = {
    ("我", "i"),
    ("喜欢", "like"),
    ("茶", "tea"),
    ("猫", "cat"),
    ("看见", "see"),
    ("书", "books"),
    ("书", "book"),
}


def fake_translates(chinese: str, english: str) -> bool:
    return (chinese, english) in LEXICON


def test_alignment_scores_a_hand_made_example_with_known_aer():
    """Three sentences, 7 Chinese words with a reference link (jieba: 我|喜欢|茶, 我|看见|猫, 书); the
    attention links 6 of them correctly: AER = 1 - 2·6/(7 + 7)."""
    examples = [
        # output characters, source tokens, the source position each output character attends to most
        (["我", "喜", "欢", "茶", "。"], ["i", "like", "tea", ".", "<eos>"], [0, 1, 1, 2, 3]),
        (["我", "看", "见", "猫", "。"], ["i", "see", "the", "cat", ".", "<eos>"], [0, 1, 1, 1, 4]),  # 猫 → see: wrong
        (["书", "。"], ["books", "!", "<eos>"], [0, 1]),
    ]
    total = AlignmentCounts()
    for output, source, argmax in examples:
        links = reference_links(output, source, fake_translates)
        attention = np.full((len(output), len(source)), 0.01)
        attention[np.arange(len(output)), argmax] = 0.9
        total.add(score_attention(links, attention))
    assert (total.predicted, total.sure, total.correct) == (7, 7, 6)
    scores = total.scores()
    assert scores["aer"] == pytest.approx(1 - 12 / 14, abs=1e-4) and scores["words"] == 7
    assert scores["precision"] == pytest.approx(6 / 7, abs=1e-4) and scores["recall"] == pytest.approx(6 / 7, abs=1e-4)


def test_punctuation_and_eos_are_never_link_targets():
    links = reference_links(["茶", "。"], ["tea", ".", "<eos>"], fake_translates)
    assert links.source_words == [0] and links.sure == [{0}]
    attention = np.array([[0.1, 0.2, 0.7], [0.0, 0.0, 1.0]])  # most weight on <eos>: the link still goes to a word
    assert score_attention(links, attention).correct == 1


def test_roles_count_previous_same_next_sink_and_rare_rows():
    # one sentence of 4 positions; head 0 looks at the previous token, head 1 at itself, head 2 at <eos> (a sink)
    weights = torch.zeros(1, 3, 4, 4)
    for q in range(4):
        weights[0, 0, q, max(q - 1, 0)] = 1.0
        weights[0, 1, q, q] = 1.0
        weights[0, 2, q, 3] = 1.0
    queries = torch.tensor([[True, True, True, False]])  # the last row is padding
    sink = torch.tensor([[False, False, False, True]])
    rare = torch.tensor([2])
    sums: dict = {}
    _accumulate(sums, "encoder", 0, weights, queries, sink, rare)
    previous, same, eos = (sums[("encoder", 0, h)] for h in range(3))
    assert previous.rows == 3 and previous.previous == 2 and previous.same == 1  # row 0 has no previous token
    assert same.same == 3 and same.confidence == 3.0 and same.entropy == pytest.approx(0.0, abs=1e-6)
    assert eos.sink == 3 and eos.next == 1 and same.rare == 1  # <eos> is row 2's next token; row 2 is the rare one
    assert _HeadSums(rows=4, same=2).roles("cross") == {"sink": 0.0}


@pytest.fixture(scope="module")
def atlas(trained_checkpoint, tmp_path_factory):
    out = tmp_path_factory.mktemp("atlas") / "heads.json"
    data = trained_checkpoint.parent / "pairs.txt"
    args = ["heads", "--checkpoint", str(trained_checkpoint), "--data", str(data), "--split", "dev", "--out", str(out)]
    assert analyze(args) == 0
    return json.loads(out.read_text(encoding="utf-8")), trained_checkpoint, data


@pytest.mark.slow
def test_analyze_writes_a_schema_valid_atlas_of_every_head(atlas):
    result, checkpoint, _ = atlas
    schema = json.loads((ROOT / "core" / "io" / "schemas" / "heads.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(result)
    loaded = load_checkpoint(checkpoint)
    assert result["model"]["sha256"] == loaded.sha256 and result["split"] == "dev" and result["sentences"] == 4
    config = loaded.config  # 1 + 1 layers, 2 heads: 2 encoder, 2 decoder, 2 cross heads
    assert [(h["kind"], h["layer"], h["head"]) for h in result["heads"]] == [
        (kind, 1, head) for kind in ("encoder", "decoder", "cross") for head in (1, 2)
    ] and config.n_heads == 2
    assert all("alignment" in h for h in result["heads"] if h["kind"] == "cross")
    assert set(summarize(result)) >= {"prunable_within_1_bleu", "alignment_head", "positional_heads"}


@pytest.mark.slow
def test_single_head_deltas_are_separately_computed_bleu_differences(atlas):
    result, checkpoint, data = atlas
    loaded = load_checkpoint(checkpoint)
    sources, references, _ = recorded_split(data, loaded.model_card, "dev")
    corpus = decode_corpus(loaded.model, loaded.pipeline, sources, references)
    baseline = ablation_scores(loaded.model, loaded.pipeline, corpus)
    assert result["baseline"] == baseline and result["pruning"][0] == {"removed": [], **baseline}
    for head in result["heads"]:
        spec = (
            f"{ {'encoder': 'enc', 'decoder': 'dec', 'cross': 'cross'}[head['kind']] }:{head['layer']}:{head['head']}"
        )
        scores = ablation_scores(loaded.model, loaded.pipeline, corpus, parse_heads(spec))
        assert head["ablation"]["bleu_delta"] == pytest.approx(scores["bleu"] - baseline["bleu"], abs=0.011)
        assert head["ablation"]["chrf_delta"] == pytest.approx(scores["chrf"] - baseline["chrf"], abs=0.011)
    removed = [point["removed"] for point in result["pruning"]]
    assert [len(r) for r in removed] == list(range(7)) and all(
        a == b[: len(a)] or set(a) <= set(b) for a, b in zip(removed, removed[1:])
    )
