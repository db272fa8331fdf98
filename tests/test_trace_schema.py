"""The trace validator itself: the JSON Schema file is valid and refuses what DESIGN.md forbids."""

import copy

import jsonschema
import pytest

from core.inference.trace import trace
from tests.helpers.trace_schema import validate_trace


@pytest.fixture(scope="module")
def good(trained_tiny) -> dict:
    model, pipeline = trained_tiny
    data = trace(model, pipeline, "Tom likes tea.").to_json()
    validate_trace(data)
    return data


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.pop("steps"),
        lambda d: d.update(source_tokens=[1, 2]),
        lambda d: d["steps"][0].update(prob=1.5),
        lambda d: d["steps"][0]["top_k"][0].append(0.1),
        lambda d: d["model"].update(n_heads="4"),
        lambda d: d.update(ablated=["enc:0:1"]),
        lambda d: d["attention"]["cross"][0][0][0].__setitem__(0, -0.1),
    ],
)
def test_the_schema_refuses_malformed_traces(good, damage):
    data = copy.deepcopy(good)
    damage(data)
    with pytest.raises(jsonschema.ValidationError):
        validate_trace(data)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d["decoder_tokens"].pop(),  # a step without its decoder token
        lambda d: d["attention"]["encoder"].pop(),  # a layer missing
        lambda d: d["attention"]["cross"][0][0][0].__setitem__(0, 0.9),  # a row that no longer sums to 1
        lambda d: d["attention"]["decoder"][0][0][0].__setitem__(1, 0.5),  # looking ahead
    ],
)
def test_the_code_checks_refuse_what_a_schema_cannot_see(good, damage):
    data = copy.deepcopy(good)
    damage(data)
    with pytest.raises(AssertionError):
        validate_trace(data)
