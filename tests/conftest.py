from __future__ import annotations

import pytest

from tests.fixtures import synthetic_pairs, train_tiny


@pytest.fixture(scope="session")
def trained_tiny():
    """A tiny Transformer that has memorised the synthetic pairs (shared, read-only)."""
    model, pipeline = train_tiny(synthetic_pairs(), steps=400)
    return model, pipeline


TRAIN_ARGS = (
    "--epochs 3 --dev-size 4 --test-size 4 --d-model 32 --n-heads 2 --n-enc-layers 1 --n-dec-layers 1 "
    "--d-ff 64 --max-tokens 300 --warmup-steps 10 --lr 3e-3 --min-freq 1"
)


@pytest.fixture(scope="session")
def trained_checkpoint(tmp_path_factory):
    """A checkpoint written by core.train itself (3 tiny epochs on the synthetic pairs), with its card."""
    from core.train import main
    from tests.fixtures import write_pairs

    folder = tmp_path_factory.mktemp("trained")
    data = write_pairs(folder / "pairs.txt", synthetic_pairs() * 3)
    out = folder / "tiny-trained.safetensors"
    assert main(["--data", str(data), "--out", str(out), *TRAIN_ARGS.split()]) == 0
    return out


@pytest.fixture
def fresh_streamlit_caches():
    """AppTest runs share the process's Streamlit caches: start and end each app test empty."""
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()
    yield
    st.cache_resource.clear()
    st.cache_data.clear()
