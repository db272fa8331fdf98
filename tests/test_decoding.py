"""Greedy (cached and not), beam search, forced prefixes, and the trace schema."""

import pytest
import torch

from core.inference.batch import translate
from core.inference.beam import beam_search_ids, length_penalty
from core.inference.greedy import greedy_ids
from core.inference.source import MAX_SOURCE_TOKENS, EmptyInputError, max_steps, prepare_source
from core.inference.trace import trace
from core.text.vocab import BOS_ID, EOS_ID
from tests.helpers.fixtures import synthetic_pairs
from tests.helpers.trace_schema import validate_trace


def uncached_greedy(model, source_ids, limit):
    """Reference greedy loop that re-runs the full decoder over the whole prefix each step."""
    src = torch.tensor([source_ids])
    tgt = [BOS_ID]
    for _ in range(limit):
        out = model(src, torch.tensor([tgt]), return_attention=True)
        token = int(out.logits[0, -1].argmax())
        if token == EOS_ID:
            return tgt[1:], out
        tgt.append(token)
    return tgt[1:], out


def test_model_translates_its_training_sentences(trained_tiny):
    model, pipeline = trained_tiny
    pairs = synthetic_pairs()[:20]
    outputs = translate(model, pipeline, [p.en for p in pairs])
    assert sum(o.text == p.zh for o, p in zip(outputs, pairs)) >= 18


def test_cached_greedy_equals_uncached_greedy_tokens_and_attention(trained_tiny):
    model, pipeline = trained_tiny
    for sentence in ("Tom likes tea.", "They see the river.", "Mary sees music and books."):
        result = trace(model, pipeline, sentence)
        ids, full = uncached_greedy(model, result.source.ids, 60)
        assert pipeline.tgt_vocab.decode(ids) == [s.token for s in result.steps if s.token != "<eos>"]
        assert greedy_ids(model, [result.source.ids])[0] == ids
        full_pass = model(
            torch.tensor([result.source.ids]), torch.tensor([[BOS_ID, *ids]]), return_attention=True
        ).attention
        torch.testing.assert_close(result.cross, torch.stack([w[0] for w in full_pass.cross]), atol=1e-5, rtol=0)
        torch.testing.assert_close(result.decoder, torch.stack([w[0] for w in full_pass.decoder]), atol=1e-5, rtol=0)
        torch.testing.assert_close(result.encoder, torch.stack([w[0] for w in full_pass.encoder]), atol=1e-5, rtol=0)


def test_batched_greedy_equals_one_at_a_time(trained_tiny):
    model, pipeline = trained_tiny
    sources = [prepare_source(model, pipeline, p.en).ids for p in synthetic_pairs()[::7]]
    batched = greedy_ids(model, sources)
    assert batched == [greedy_ids(model, [s])[0] for s in sources]


def normalised_score(model, source_ids, output_ids, alpha=0.6) -> float:
    """log P(output, <eos> | source) / GNMT length penalty: what beam search ranks finished outputs by."""
    target = [*output_ids, EOS_ID]
    with torch.no_grad():
        logits = model(torch.tensor([source_ids]), torch.tensor([[BOS_ID, *output_ids]])).logits
    log_probs = torch.log_softmax(logits[0].double(), dim=-1)
    total = float(sum(log_probs[t, token] for t, token in enumerate(target)))
    return total / length_penalty(len(target), alpha)


def test_beam_one_equals_greedy_and_beam_four_scores_at_least_as_well(trained_tiny):
    model, pipeline = trained_tiny
    sentences = [p.en for p in synthetic_pairs()[::9]] + ["Tom sees tea music river.", "The cat likes Mary."]
    for sentence in sentences:
        ids = prepare_source(model, pipeline, sentence).ids
        greedy = greedy_ids(model, [ids])[0]
        assert beam_search_ids(model, ids, 1) == greedy
        beam = beam_search_ids(model, ids, 4)
        assert beam and EOS_ID not in beam
        assert normalised_score(model, ids, beam) >= normalised_score(model, ids, greedy) - 1e-6, sentence


def test_forced_prefix_is_honoured_and_decoding_continues(trained_tiny):
    model, pipeline = trained_tiny
    original = trace(model, pipeline, "Tom likes tea.")
    alternative = original.steps[0].top_k[1][0]
    branch = trace(model, pipeline, "Tom likes tea.", forced=[alternative])
    assert branch.steps[0].token == alternative and branch.steps[0].forced
    assert not branch.steps[1].forced
    assert branch.decoder_tokens[:2] == ["<bos>", alternative]
    # after the forced token, decoding is greedy again: every later step takes its top candidate
    assert all(step.token == step.top_k[0][0] for step in branch.steps[1:])
    limit = max_steps(model, len(branch.source.ids))
    assert branch.steps[-1].token == "<eos>" or len(branch.steps) == limit


def test_trace_json_validates_against_the_schema(trained_tiny):
    model, pipeline = trained_tiny
    data = trace(model, pipeline, "We like apples and durian!").to_json()
    validate_trace(data)
    assert "<unk>" in data["source_tokens"] and data["source_tokens"][-1] == "<eos>"
    assert data["translation"] and "<" not in data["translation"]


def test_empty_input_is_a_clear_error_and_long_input_is_cut_with_a_notice(trained_tiny):
    model, pipeline = trained_tiny
    for text in ("", "   \n\t", "\u200b"):
        with pytest.raises(EmptyInputError, match="nothing to translate"):
            prepare_source(model, pipeline, text)
    long = prepare_source(model, pipeline, "tea " * 500)
    limit = min(MAX_SOURCE_TOKENS, model.config.max_len - 1)
    assert len(long.ids) == limit + 1 and any("only the first" in n for n in long.notices)
    result = trace(model, pipeline, "tea " * 500)
    assert len(result.steps) <= model.config.max_len
    assert [t.text for t in translate(model, pipeline, ["", "Tom likes tea."])][0] == ""


def test_a_huge_unknown_word_is_named_briefly_in_the_notice(trained_tiny):
    model, pipeline = trained_tiny
    source = prepare_source(model, pipeline, "Tom likes " + "x" * 10_000)
    notice = next(n for n in source.notices if n.startswith("Not in the vocabulary"))
    assert notice.endswith("x" * 40 + "…") and len(notice) < 100
