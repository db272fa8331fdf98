"""The server's store of uploaded models: one copy per file, a memory budget, least recently used
out first, safe under threads."""

from __future__ import annotations

import hashlib
import threading

import pytest
import torch

from core.io.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from core.io.model_store import BUDGET_ENV, DEFAULT_BUDGET_MB, ModelStore, budget_from_env, model_bytes
from core.model.registry import build_model
from core.text.pipeline import build_pipeline
from tests.helpers.fixtures import synthetic_pairs, tiny_config


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[bytes]:
    """Three different tiny checkpoint files of the same size."""
    pipeline = build_pipeline(synthetic_pairs(), "char", 1)
    folder = tmp_path_factory.mktemp("store")
    out = []
    for seed in range(3):
        torch.manual_seed(seed)
        path = save_checkpoint(folder / f"m{seed}.safetensors", build_model(tiny_config(pipeline)).eval(), pipeline)
        out.append(path.read_bytes())
    return out


def add(store: ModelStore, data: bytes, calls: list[int] | None = None):
    def load():
        if calls is not None:
            calls.append(1)
        return load_checkpoint(data)

    return store.add(hashlib.sha256(data).hexdigest(), load)


def test_the_same_file_is_one_model_however_often_it_is_uploaded(files):
    store, calls = ModelStore(2**30), []
    first = add(store, files[0], calls)
    assert all(add(store, files[0], calls) is first for _ in range(30))
    assert len(calls) == 1 and len(store) == 1 and store.used_bytes() == model_bytes(first)
    assert first.sha256 == hashlib.sha256(files[0]).hexdigest()  # the key is LoadedModel.sha256


def test_the_least_recently_used_model_is_evicted_when_the_budget_is_full(files):
    size = model_bytes(load_checkpoint(files[0]))
    store = ModelStore(2 * size)
    a, b = add(store, files[0]), add(store, files[1])
    keys = [hashlib.sha256(f).hexdigest() for f in files]
    assert store.get(keys[0]) is a  # a is now the most recently used
    add(store, files[2])
    assert keys[1] not in store and store.get(keys[1]) is None  # b went: used least recently
    assert store.get(keys[0]) is a and keys[2] in store and store.used_bytes() <= store.budget_bytes
    assert b is not a


def test_a_model_over_the_whole_budget_is_refused_and_changes_nothing(files):
    store = ModelStore(1024)
    with pytest.raises(CheckpointError, match="MiB of uploaded models"):
        add(store, files[0])
    assert len(store) == 0


def test_sessions_uploading_the_same_file_at_once_share_one_model(files):
    store = ModelStore(2**30)
    results = [None] * 8

    def upload(index: int) -> None:
        results[index] = add(store, files[1])

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store) == 1 and all(result is results[0] for result in results)


def test_the_budget_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv(BUDGET_ENV, raising=False)
    assert budget_from_env() == DEFAULT_BUDGET_MB * 2**20
    monkeypatch.setenv(BUDGET_ENV, "512")
    assert budget_from_env() == 512 * 2**20
    for bad in ("0", "-3", "2GB", "1.5"):
        monkeypatch.setenv(BUDGET_ENV, bad)
        with pytest.raises(ValueError, match=BUDGET_ENV):
            budget_from_env()


@pytest.mark.reliability
def test_the_servers_memory_for_uploads_stays_within_the_budget(tmp_path, report_result):
    """Twelve distinct ~64 MiB models through a 150 MiB store (two fit): once the store is full the
    process grows by less than 3 models' worth (the allocator's slack: it keeps some freed
    memory), not by ten more models."""
    import gc

    from bench.timing import rss_mb
    from core.model.config import ModelConfig
    from core.text.pipeline import TextPipeline
    from core.text.vocab import SPECIALS, Vocab

    vocab = Vocab([*SPECIALS, *(f"t{i}" for i in range(30_000))])
    pipeline = TextPipeline(vocab, vocab)
    config = ModelConfig(len(vocab), len(vocab), d_model=256, n_heads=4, n_enc_layers=1, n_dec_layers=1, d_ff=512)
    files = []
    for seed in range(12):
        torch.manual_seed(seed)
        files.append(save_checkpoint(tmp_path / f"big{seed}.safetensors", build_model(config).eval(), pipeline))
    store = ModelStore(150 * 2**20)
    rss = []
    for path in files:
        size = model_bytes(add(store, path.read_bytes()))
        gc.collect()
        rss.append(rss_mb())
    kept = 150 * 2**20 // size
    assert len(store) == kept and store.used_bytes() <= store.budget_bytes
    growth = max(rss[kept:]) - rss[kept - 1]
    assert growth < 3 * size / 2**20, f"RSS grew {growth:.0f} MB after the store was full"
    report_result(
        "upload store",
        f"{len(files)} distinct {size / 2**20:.0f} MiB models through a 150 MiB budget: {kept} kept; RSS by upload "
        f"{', '.join(f'{r:.0f}' for r in rss)} MB (+{growth:.0f} MB after the store was full)",
    )
