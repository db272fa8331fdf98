"""The architecture registry says what each model really has: the attention it returns, its trace
shapes, the config it needs."""

import pytest
import torch

from core.inference.trace import empty_trace_json, trace
from core.model.config import ModelConfig
from core.model.registry import ARCHITECTURES, ATTENTION_KINDS, build_model, check_config, spec_for
from core.text.pipeline import build_pipeline
from tests.helpers.fixtures import synthetic_pairs, tiny_config
from tests.helpers.trace_schema import validate_trace


@pytest.fixture(scope="module")
def pipeline():
    return build_pipeline(synthetic_pairs(), "char", 1)


@pytest.mark.parametrize("arch", list(ARCHITECTURES))
def test_the_spec_matches_the_attention_the_model_returns(arch, pipeline):
    spec = spec_for(arch)
    config = tiny_config(pipeline, arch=arch, n_enc_layers=2, n_dec_layers=3, **spec.fixed_config)
    model = build_model(config).eval()
    assert isinstance(model, spec.model_class)
    src, tgt = torch.tensor([[5, 6, 7, 3]]), torch.tensor([[2, 5, 6]])
    maps = model(src, tgt, return_attention=True).attention
    layers = spec.attention_layers(config.n_enc_layers, config.n_dec_layers)
    assert set(layers) == set(ATTENTION_KINDS)
    for kind in ATTENTION_KINDS:
        returned = getattr(maps, kind)
        assert len(returned) == layers[kind], kind
        assert all(w.shape[1] == config.n_heads for w in returned)
    assert spec.attention_kinds(config) == [kind for kind in ATTENTION_KINDS if layers[kind]]
    validate_trace(trace(model, pipeline, "Tom likes tea.").to_json())
    validate_trace(empty_trace_json(model, pipeline, ""))


def test_pages_find_a_reason_for_everything_the_gru_lacks():
    gru, transformer = spec_for("rnn"), spec_for("transformer")
    assert set(gru.lacks) == {"positions", "masks", "self_attention", "heads"} and not transformer.lacks
    assert all(reason.endswith(".") for reason in gru.lacks.values())


def test_unknown_architectures_and_broken_configs_are_refused():
    with pytest.raises(ValueError, match="arch='lstm' is not known"):
        check_config(ModelConfig(10, 10, arch="lstm"))
    with pytest.raises(ValueError, match="n_heads=1"):
        build_model(ModelConfig(10, 10, d_model=32, n_heads=4, arch="rnn"))
    with pytest.raises(ValueError, match="n_heads=3 does not divide"):
        build_model(ModelConfig(10, 10, d_model=32, n_heads=3))
