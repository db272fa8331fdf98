"""One loader for every caller: round trips, and every kind of bad file raises CheckpointError."""

import io
import json
import pickle

import pytest
import safetensors.torch
import torch

from core.io.checkpoint import CheckpointError, build_metadata, load_checkpoint, save_checkpoint
from core.model.transformer import Transformer
from core.text.pipeline import TextPipeline
from core.text.vocab import SPECIALS, Vocab
from tests.helpers.fixtures import tiny_config


@pytest.fixture(scope="module")
def small():
    torch.manual_seed(0)
    pipeline = TextPipeline(
        Vocab([*SPECIALS, "i", "like", "tea", "."]), Vocab([*SPECIALS, "我", "喜", "欢", "茶", "。"]), "char"
    )
    return Transformer(tiny_config(pipeline)).eval(), pipeline


def logits_of(model):
    src, tgt = torch.tensor([[4, 5, 6, 7, 3]]), torch.tensor([[2, 4, 5, 6]])
    return model(src, tgt).logits


def tensors_and_metadata(model, pipeline):
    tensors = {k: v.clone() for k, v in model.state_dict().items()}
    return tensors, build_metadata(model.config, pipeline, {"note": "test"})


def as_bytes(tensors, metadata) -> bytes:
    return safetensors.torch.save(tensors, metadata=metadata)


@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_full_precision_round_trip_gives_identical_logits(small, tmp_path, suffix):
    model, pipeline = small
    path = save_checkpoint(tmp_path / f"m{suffix}", model, pipeline, {"command": "test"}, half=False)
    loaded = load_checkpoint(path)
    assert torch.equal(logits_of(loaded.model), logits_of(model))
    assert loaded.card == {"command": "test"} and loaded.config == model.config
    assert loaded.pipeline.tgt_vocab.itos == pipeline.tgt_vocab.itos
    assert torch.equal(logits_of(load_checkpoint(path.read_bytes()).model), logits_of(model))


def test_half_precision_round_trip_is_close_and_half_the_size(small, tmp_path):
    model, pipeline = small
    half = save_checkpoint(tmp_path / "h.safetensors", model, pipeline, half=True)
    full = save_checkpoint(tmp_path / "f.safetensors", model, pipeline, half=False)
    assert half.stat().st_size < 0.6 * full.stat().st_size
    torch.testing.assert_close(logits_of(load_checkpoint(half).model), logits_of(model), atol=0.05, rtol=0.01)


def test_loaded_model_is_read_only_and_in_eval_mode(small, tmp_path):
    loaded = load_checkpoint(save_checkpoint(tmp_path / "m.safetensors", *small))
    assert not loaded.model.training
    assert not any(p.requires_grad for p in loaded.model.parameters())


def modified(small, change):
    tensors, metadata = tensors_and_metadata(*small)
    change(tensors, metadata)
    return as_bytes(tensors, metadata)


def set_config(**fields):
    def change(tensors, metadata):
        config = json.loads(metadata["model_config"])
        config.update(fields)
        metadata["model_config"] = json.dumps(config)

    return change


BAD_FILES = {
    "empty file": (lambda s: b"", "not a checkpoint"),
    "text file": (lambda s: b"English\tChinese\nHello\t\xe4\xbd\xa0\xe5\xa5\xbd\n", "not a checkpoint"),
    "random bytes": (lambda s: bytes(range(256)) * 4, "not a checkpoint"),
    "truncated": (lambda s: as_bytes(*tensors_and_metadata(*s))[:-100], "truncated"),
    "cut inside the header": (lambda s: as_bytes(*tensors_and_metadata(*s))[:60], "truncated"),
    "no metadata": (lambda s: safetensors.torch.save(tensors_and_metadata(*s)[0]), "no Translucent metadata"),
    "unknown format version": (
        lambda s: modified(s, lambda t, m: m.update(format=json.dumps({"name": "translucent", "version": 99}))),
        "unknown format version 99",
    ),
    "other format": (
        lambda s: modified(s, lambda t, m: m.update(format=json.dumps({"name": "llama"}))),
        "expected a 'translucent'",
    ),
    "missing model_config": (lambda s: modified(s, lambda t, m: m.pop("model_config")), "'model_config' is missing"),
    "non-JSON model_config": (
        lambda s: modified(s, lambda t, m: m.update(model_config="{d_model: 32")),
        "'model_config' is not valid JSON",
    ),
    "heads do not divide d_model": (lambda s: modified(s, set_config(n_heads=3)), "does not divide"),
    "absurd size": (lambda s: modified(s, set_config(d_model=10**9)), "d_model"),
    "negative layers": (lambda s: modified(s, set_config(n_enc_layers=-1)), "n_enc_layers"),
    "unknown config key": (lambda s: modified(s, set_config(rope=True)), "unknown model_config keys"),
    "vocab size mismatch": (
        lambda s: modified(s, lambda t, m: m.update(tgt_vocab=json.dumps([*SPECIALS, "我"]))),
        "vocabulary sizes",
    ),
    "vocab not a list": (lambda s: modified(s, lambda t, m: m.update(src_vocab=json.dumps({"a": 1}))), "vocab"),
    "unknown tokenizer": (
        lambda s: modified(s, lambda t, m: m.update(tokenizer=json.dumps({"tgt": "bpe"}))),
        "tokenizer",
    ),
    "missing tensor": (lambda s: modified(s, lambda t, m: t.pop("encoder_layers.0.ffn.linear1.weight")), "missing"),
    "extra tensor": (lambda s: modified(s, lambda t, m: t.update(extra=torch.zeros(2))), "unexpected"),
    "wrong shape": (
        lambda s: modified(s, lambda t, m: t.update({"src_embed.embedding.weight": torch.zeros(9, 32)})),
        "has shape",
    ),
    "NaN weights": (
        lambda s: modified(s, lambda t, m: t["decoder_layers.0.ffn.linear2.bias"].fill_(float("nan"))),
        "NaN",
    ),
    "integer weights": (
        lambda s: modified(
            s, lambda t, m: t.update({"decoder_layers.0.ffn.linear2.bias": torch.zeros(32, dtype=torch.int32)})
        ),
        "dtype",
    ),
    "pt without structure": (lambda s: _torch_bytes({"weights": torch.zeros(2)}), "must hold"),
}


def _torch_bytes(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_invalid_checkpoint_raises_checkpoint_error_with_a_clear_message(small, case):
    make, expected = BAD_FILES[case]
    with pytest.raises(CheckpointError, match=expected):
        load_checkpoint(make(small))


def test_missing_path_is_a_checkpoint_error(tmp_path):
    with pytest.raises(CheckpointError, match="cannot read"):
        load_checkpoint(tmp_path / "nope.safetensors")


class WritesAFile:
    """Unpickling this would create a file: proof of code execution if the loader ran it."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
def test_pickle_payloads_never_execute(small, tmp_path):
    target = tmp_path / "pwned"
    tensors, metadata = tensors_and_metadata(*small)
    payloads = [
        pickle.dumps(WritesAFile(target)),  # a bare pickle
        _torch_bytes({"metadata": metadata, "tensors": tensors, "hook": WritesAFile(target)}),  # inside a torch zip
    ]
    for payload in payloads:
        with pytest.raises(CheckpointError, match="nothing in it was executed"):
            load_checkpoint(payload)
        assert not target.exists()


def test_callers_catching_value_error_catch_every_refusal(small):
    """DESIGN.md: CheckpointError is a ValueError, so code that handles bad input in general handles it."""
    for bad in (b"", b"garbage" * 10, pickle.dumps({"tensors": {}})):
        with pytest.raises(ValueError) as caught:
            load_checkpoint(bad)
        assert type(caught.value) is CheckpointError
