"""Head ablation: switching a head off equals a model whose output projection ignores that head's
columns; ablating nothing is the normal model, bit for bit; the CLI's --ablate contract."""

import copy
import json
import subprocess
import sys
import threading

import pytest
import torch

from core.inference.batch import translate
from core.inference.beam import beam_search_ids
from core.inference.source import prepare_source
from core.inference.trace import trace
from core.io.checkpoint import save_checkpoint
from core.io.paths import ROOT
from core.model.intervention import HeadRef, Intervention, heads_spec, parse_heads
from core.model.registry import all_heads, build_model, check_heads
from core.text.pipeline import build_pipeline
from tests.helpers.fixtures import synthetic_pairs, tiny_config
from tests.helpers.trace_schema import validate_trace

MODULES = {
    "encoder": ("encoder_layers", "self_attn"),
    "decoder": ("decoder_layers", "self_attn"),
    "cross": ("decoder_layers", "cross_attn"),
}


def without_heads(model, heads):
    """A copy of the model whose output projections ignore the given heads' columns."""
    ablated = copy.deepcopy(model)
    d_k = model.config.head_dim
    with torch.no_grad():
        for head in heads:
            stack, name = MODULES[head.kind]
            attention = getattr(getattr(ablated, stack)[head.layer], name)
            attention.out_proj.weight[:, head.head * d_k : (head.head + 1) * d_k] = 0.0
    return ablated


@pytest.fixture(scope="module")
def pipeline():
    return build_pipeline(synthetic_pairs(), "char", 1)


def random_model(pipeline, norm_first=False, seed=0):
    torch.manual_seed(seed)
    model = build_model(tiny_config(pipeline, norm_first=norm_first)).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.2)  # make every head matter
    return model


@pytest.mark.parametrize(
    ("norm_first", "spec"),
    [
        (False, "enc:1:2"),
        (False, "dec:2:1"),
        (False, "cross:2:4"),
        (False, "enc:2:1,dec:1:3,cross:1:1,cross:2:2"),
        (True, "enc:2:1,dec:1:3,cross:1:1,cross:2:2"),
    ],
)
def test_ablating_heads_equals_zeroing_their_output_projection_columns(pipeline, norm_first, spec):
    model = random_model(pipeline, norm_first)
    heads = parse_heads(spec)
    reference = without_heads(model, heads)
    intervention = Intervention(ablated_heads=heads)
    src = torch.tensor([[5, 6, 7, 8, 3, 0], [9, 10, 3, 0, 0, 0]])
    tgt = torch.tensor([[2, 5, 6, 7], [2, 8, 0, 0]])
    ours = model(src, tgt, return_attention=True, intervention=intervention)
    theirs = reference(src, tgt, return_attention=True)
    torch.testing.assert_close(ours.logits, theirs.logits, atol=1e-5, rtol=0)
    assert (ours.logits - model(src, tgt).logits).abs().max() > 1e-3  # the heads did matter
    # the cached step-by-step trace, greedy batches and beam search follow the same model
    text = "Tom likes the cat."
    ablated_trace, reference_trace = (
        trace(model, pipeline, text, intervention=intervention),
        trace(reference, pipeline, text),
    )
    assert [s.token for s in ablated_trace.steps] == [s.token for s in reference_trace.steps]
    torch.testing.assert_close(ablated_trace.cross, reference_trace.cross, atol=1e-5, rtol=0)
    assert ablated_trace.to_json()["ablated"] == heads_spec(heads).split(",")
    validate_trace(ablated_trace.to_json())
    texts = [p.en for p in synthetic_pairs()[::11]]
    assert [t.text for t in translate(model, pipeline, texts, intervention=intervention)] == [
        t.text for t in translate(reference, pipeline, texts)
    ]
    ids = prepare_source(model, pipeline, text).ids
    assert beam_search_ids(model, ids, 3, intervention=intervention) == beam_search_ids(reference, ids, 3)


def test_ablating_nothing_is_the_normal_model_bit_for_bit(trained_tiny):
    model, pipeline = trained_tiny
    for text in ("Tom likes tea.", "They see the river."):
        plain = trace(model, pipeline, text).to_json()
        assert trace(model, pipeline, text, intervention=Intervention(ablated_heads=frozenset())).to_json() == plain
        assert "ablated" not in plain


def test_two_users_ablating_different_heads_at_once_do_not_see_each_other(trained_tiny):
    model, pipeline = trained_tiny
    interventions = [
        Intervention(ablated_heads=parse_heads(s)) for s in ("", "cross:2:1,cross:2:2", "enc:1:1,enc:2:3", "dec:1:4")
    ]
    texts = [p.en for p in synthetic_pairs()[::6]]
    serial = [[trace(model, pipeline, t, intervention=i).to_json() for t in texts] for i in interventions]
    results, barrier = [None] * len(interventions), threading.Barrier(len(interventions))

    def work(index):
        barrier.wait()
        results[index] = [trace(model, pipeline, t, intervention=interventions[index]).to_json() for t in texts]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(interventions))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == serial


def test_head_specs_parse_and_bad_ones_are_named():
    heads = parse_heads(" cross:3:2, enc:1:1,dec:2:4 ")
    assert heads == {HeadRef("cross", 2, 1), HeadRef("encoder", 0, 0), HeadRef("decoder", 1, 3)}
    assert heads_spec(heads) == "enc:1:1,dec:2:4,cross:3:2" and parse_heads(heads_spec(heads)) == heads
    assert parse_heads("") == frozenset()
    for bad, message in [
        ("self:1:1", "unknown kind"),
        ("enc:0:1", "counted from 1"),
        ("enc:1", "kind:layer:head"),
        ("enc:a:1", "whole numbers"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_heads(bad)


def test_heads_must_exist_in_the_model(pipeline):
    config = tiny_config(pipeline)  # 2 + 2 layers, 4 heads
    check_heads(config, parse_heads("enc:2:4,cross:1:1"))
    assert len(all_heads(config)) == 3 * 2 * 4
    for bad, message in [("enc:3:1", "layer 3 does not exist"), ("cross:1:5", "head 5 does not exist")]:
        with pytest.raises(ValueError, match=message):
            check_heads(config, parse_heads(bad))
    gru = tiny_config(pipeline, arch="rnn", n_heads=1)
    check_heads(gru, parse_heads("cross:1:1"))
    with pytest.raises(ValueError, match="no encoder self-attention"):
        check_heads(gru, parse_heads("enc:1:1"))


def test_the_gru_can_lose_its_one_attention(pipeline):
    torch.manual_seed(0)
    model = build_model(tiny_config(pipeline, arch="rnn", n_heads=1)).eval()
    src, tgt = torch.tensor([[5, 6, 7, 3]]), torch.tensor([[2, 5, 6]])
    off = model(src, tgt, intervention=Intervention(ablated_heads=parse_heads("cross:1:1"))).logits
    assert (off - model(src, tgt).logits).abs().max() > 1e-4
    result = trace(model, pipeline, "Tom likes tea.", intervention=Intervention(ablated_heads=parse_heads("cross:1:1")))
    assert result.to_json()["ablated"] == ["cross:1:1"]


@pytest.mark.slow
def test_translate_cli_ablates_and_refuses_bad_specs(trained_tiny, tmp_path):
    model, pipeline = trained_tiny
    path = save_checkpoint(tmp_path / "tiny.safetensors", model, pipeline, half=False)

    def run(*args, stdin="Tom likes tea.\n\nMary sees books.\n"):
        command = [sys.executable, "-m", "core.translate", "--checkpoint", str(path), *args]
        return subprocess.run(command, input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=120)

    traced = run("--trace", "--beam", "2", "--ablate", "cross:2:1,enc:1:3")
    assert traced.returncode == 0, traced.stderr
    lines = [json.loads(line) for line in traced.stdout.splitlines()]
    assert len(lines) == 3 and all(line["ablated"] == ["enc:1:3", "cross:2:1"] for line in lines)
    for line in lines:
        validate_trace(line)
    plain = run("--ablate", "cross:2:1,enc:1:3")
    assert plain.returncode == 0 and len(plain.stdout.splitlines()) == 3
    for spec, message in [
        ("cross:9:1", "layer 9 does not exist"),
        ("x:1:1", "unknown kind"),
        ("enc:1:0", "counted from 1"),
    ]:
        refused = run("--ablate", spec)
        assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr
