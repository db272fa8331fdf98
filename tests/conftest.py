from __future__ import annotations

import pytest

from tests.fixtures import synthetic_pairs, train_tiny


@pytest.fixture(scope="session")
def trained_tiny():
    """A tiny Transformer that has memorised the synthetic pairs (shared, read-only)."""
    model, pipeline = train_tiny(synthetic_pairs(), steps=400)
    return model, pipeline
