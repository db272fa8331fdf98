from __future__ import annotations

import pytest

from tests.helpers.fixtures import synthetic_pairs, train_tiny


@pytest.fixture(scope="session")
def trained_tiny():
    """A tiny Transformer that has memorised the synthetic pairs (shared, read-only)."""
    model, pipeline = train_tiny(synthetic_pairs(), steps=400)
    return model, pipeline


@pytest.fixture(scope="session")
def trained_checkpoint(tmp_path_factory):
    """A checkpoint written by core.train itself (3 tiny epochs on the synthetic pairs), with its card."""
    from core.train import main
    from tests.helpers.fixtures import tiny_train_args, write_pairs

    folder = tmp_path_factory.mktemp("trained")
    data = write_pairs(folder / "pairs.txt", synthetic_pairs() * 3)
    out = folder / "tiny-trained.safetensors"
    assert main(tiny_train_args(data, out)) == 0
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


def pytest_addoption(parser):
    parser.addoption(
        "--full",
        action="store_true",
        help="run the reliability suites (fuzz, concurrency, soak) at full size instead of the CI size",
    )


@pytest.fixture(scope="session")
def full_size(request) -> bool:
    return bool(request.config.getoption("--full"))


RELIABILITY_RESULTS: list[str] = []


@pytest.fixture(scope="session")
def report_result():
    """report_result("text fuzz", "1000 inputs, 0 exceptions, p90 41 ms"): printed in pytest's summary,
    so a run with --full gives the numbers the README quotes."""

    def report(suite: str, summary: str) -> None:
        RELIABILITY_RESULTS.append(f"{suite}: {summary}")

    return report


def pytest_terminal_summary(terminalreporter):
    if RELIABILITY_RESULTS:
        terminalreporter.section("reliability results")
        for line in RELIABILITY_RESULTS:
            terminalreporter.write_line(line)
