"""Many threads through the ONE shared model at once (what the app does: every browser session
uses the model that `pages.ui.session_models.shipped_model` caches with st.cache_resource).

A module that kept state between calls (a stashed attention map, a KV cache, a dropout switch)
would make concurrent results differ from serial ones. The comparison is exact, bit for bit:
every token, probability and attention weight. That holds because each worker thread runs
torch's ops with the same intra-op thread count as the serial run (checked below): with a
different count, float reductions are split differently and the last bits change (measured with
the shipped model: 1 thread instead of 2 changes 8 of 16 traces, by up to 4e-7).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
import torch

from core.explain import mask_lab, positional
from core.inference.batch import translate
from core.inference.source import prepare_source
from core.inference.trace import trace
from core.io.checkpoint import LoadedModel
from core.io.paths import DEFAULT_CHECKPOINT, GRU_CHECKPOINT
from core.model.intervention import Intervention

pytestmark = [pytest.mark.reliability, pytest.mark.slow, pytest.mark.usefixtures("fresh_streamlit_caches")]

THREADS = 8
SENTENCES_PER_THREAD = {False: 6, True: 25}  # CI size, --full (the issue: 8 threads × 25 sentences)

SUBJECTS = (
    "Tom",
    "Mary",
    "My brother",
    "Her mother",
    "The teacher",
    "The old man",
    "Your friend",
    "His sister",
    "The doctor",
    "Our neighbour",
)
PREDICATES = (
    "likes to read books.",
    "is taller than me.",
    "went to the station yesterday.",
    "does not eat fish.",
    "will stay at home today because it is raining.",
    "bought a new car last week.",
    "can speak English and French.",
    "is looking for the key.",
    "wants to drink a cup of tea.",
    "has lived in Beijing for three years.",
    "was very happy.",
    "plays the piano every evening.",
    "is a doctor.",
    "lost the umbrella at the airport.",
    "runs fast.",
    "is afraid of dogs.",
    "called me last night.",
    "knows where the hospital is.",
    "needs more time to finish the work.",
    "opened the window.",
)


def english_sentences(count: int) -> list[str]:
    """`count` different sentences of different lengths (so threads finish their steps out of step)."""
    pool = [f"{subject} {predicate}" for predicate, subject in itertools.product(PREDICATES, SUBJECTS)]
    if count > len(pool):
        raise ValueError(f"only {len(pool)} sentences available")
    return pool[:: max(1, len(pool) // count)][:count]


def weights_digest(model: torch.nn.Module) -> str:
    """SHA-256 over every parameter and buffer (non-persistent ones too), bit for bit."""
    digest = hashlib.sha256()
    tensors = itertools.chain(model.named_parameters(), model.named_buffers())
    for name, tensor in sorted(tensors, key=lambda item: item[0]):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def plain(value: Any) -> Any:
    """A comparable form of a result: tensors and arrays as (dtype, shape, raw bytes), so equality is
    bitwise (and NaN equals NaN); dataclasses, dicts and sequences recursively."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().contiguous().numpy()
    if isinstance(value, np.ndarray):
        return (str(value.dtype), value.shape, value.tobytes())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two plain() results first differ, for a readable failure message."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a.keys() | b.keys():
            if a.get(key) != b.get(key):
                return first_difference(a.get(key), b.get(key), f"{path}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}[{index}]")
    if isinstance(a, tuple) and isinstance(b, tuple) and a[:2] == b[:2]:  # plain() tensors: same dtype, shape
        x, y = (np.frombuffer(raw, dtype=a[0]).astype(float) for raw in (a[2], b[2]))
        return f"{path}: {int((x != y).sum())} of {x.size} values differ, largest by {np.abs(x - y).max():.3g}"
    if isinstance(a, list) and isinstance(b, list):
        try:
            gap = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)).max()
            return f"{path}: largest difference {gap:.3g}"
        except (ValueError, TypeError):
            pass
    return f"{path}: {str(a)[:120]} != {str(b)[:120]}"


def run_together(jobs_per_thread: list[list[Callable[[], Any]]]) -> tuple[list[list[Any]], set[int], float]:
    """Run each thread's jobs in order, all threads released at once by a barrier.
    Returns the results per thread, the torch thread counts the workers saw, and the wall time."""
    barrier = threading.Barrier(len(jobs_per_thread))
    torch_threads: set[int] = set()

    def work(jobs: list[Callable[[], Any]]) -> list[Any]:
        torch_threads.add(torch.get_num_threads())
        barrier.wait(timeout=60)
        return [job() for job in jobs]

    with ThreadPoolExecutor(max_workers=len(jobs_per_thread)) as pool:
        started = time.perf_counter()
        futures = [pool.submit(work, jobs) for jobs in jobs_per_thread]
        results = [future.result(timeout=600) for future in futures]
        elapsed = time.perf_counter() - started
    return results, torch_threads, elapsed


def shared_models(paths: tuple[str, ...]) -> dict[str, LoadedModel]:
    """Every thread asks the app's cache for each model at the same moment: all must get the same object
    (st.cache_resource loads it once), exactly as concurrent first visits to a fresh server do."""
    from pages.ui.session_models import shipped_model

    results, _, _ = run_together([[lambda path=path: shipped_model(path) for path in paths] for _ in range(THREADS)])
    for index, path in enumerate(paths):
        assert len({id(per_thread[index]) for per_thread in results}) == 1, f"{path} was loaded more than once"
    return dict(zip(paths, results[0]))


def test_threads_through_the_shared_model_give_exactly_the_serial_traces(full_size, report_result):
    loaded = shared_models((str(DEFAULT_CHECKPOINT),))[str(DEFAULT_CHECKPOINT)]
    model, pipeline = loaded.model, loaded.pipeline
    per_thread = SENTENCES_PER_THREAD[full_size]
    sentences = english_sentences(THREADS * per_thread)
    assert len(set(sentences)) == len(sentences)
    before = weights_digest(model)

    # One at a time, in one worker thread: Streamlit runs every script in a worker thread, never the main one.
    [serial_results], serial_threads, serial_s = run_together(
        [[lambda text=text: trace(model, pipeline, text).to_json() for text in sentences]]
    )
    serial = dict(zip(sentences, serial_results))
    assert len({json["translation"] for json in serial.values()}) > len(sentences) // 2  # really different inputs

    # Thread k takes sentences k, k+8, k+16, ...: neighbours in length run side by side.
    chunks = [sentences[k::THREADS] for k in range(THREADS)]
    jobs = [[lambda text=text: trace(model, pipeline, text).to_json() for text in chunk] for chunk in chunks]
    results, torch_threads, concurrent_s = run_together(jobs)

    assert torch_threads == serial_threads, (
        f"the concurrent workers ran torch with {torch_threads} intra-op threads, the serial run with "
        f"{serial_threads}: floats may then differ in their last bits"
    )
    differences = [
        f"{text!r}{first_difference(got, serial[text])}"
        for chunk, got_chunk in zip(chunks, results)
        for text, got in zip(chunk, got_chunk)
        if got != serial[text]
    ]
    assert not differences, f"{len(differences)} of {len(sentences)} traces differ: {differences[:3]}"
    assert weights_digest(model) == before, "the shared model's weights changed"
    assert model.training is False
    assert not any(p.requires_grad for p in model.parameters())
    report_result(
        "concurrency",
        f"{THREADS} threads × {per_thread} sentences through one shared model: {len(sentences)}/{len(sentences)} "
        f"traces bitwise identical to serial (tokens, probs, every attention tensor); serial {serial_s:.1f} s "
        f"({1000 * serial_s / len(sentences):.0f} ms/trace), concurrent {concurrent_s:.1f} s; "
        f"torch intra-op threads {min(torch_threads)} in every worker; weights unchanged, eval mode",
    )


def page_jobs(transformer: LoadedModel, gru: LoadedModel, sentences: list[str]) -> dict[str, Callable[[], Any]]:
    """The other calls the pages make on the shared models (batch and beam translation, a branch,
    the position ablation, the mask lab, the GRU), keyed by a name for failure messages."""
    t_model, t_pipe = transformer.model, transformer.pipeline
    jobs: dict[str, Callable[[], Any]] = {
        "translate batch": lambda: translate(t_model, t_pipe, sentences),
        "GRU translate batch": lambda: translate(gru.model, gru.pipeline, sentences),
    }
    for text in sentences[:4]:
        first = trace(t_model, t_pipe, text).steps[0].top_k[1][0]  # the runner-up first token: a branch
        source = prepare_source(t_model, t_pipe, text)
        jobs |= {
            f"beam 4 {text!r}": lambda text=text: translate(t_model, t_pipe, [text], beam_size=4),
            f"branch {text!r}": lambda text=text, first=first: trace(t_model, t_pipe, text, forced=(first,)).to_json(),
            f"shuffled {text!r}": lambda text=text: trace(
                t_model, t_pipe, text, intervention=Intervention(source_positions="shuffled")
            ).to_json(),
            f"removed {text!r}": lambda text=text: trace(
                t_model, t_pipe, text, intervention=Intervention(source_positions="removed")
            ).to_json(),
            f"GRU trace {text!r}": lambda text=text: trace(gru.model, gru.pipeline, text).to_json(),
            f"GRU beam 3 {text!r}": lambda text=text: translate(gru.model, gru.pipeline, [text], beam_size=3),
            f"mask lab {text!r}": lambda text=text: [
                mask_lab.score_pipeline(t_model, batch, kind, 1, 2, 0)
                for batch in [mask_lab.build_batch(t_model, t_pipe, [text, mask_lab.partner_sentence(3)])]
                for kind in ("encoder", "decoder", "cross")
            ],
            f"embedding parts {text!r}": lambda source=source: positional.embedding_parts(
                t_model, source.ids, source.tokens
            ),
        }
    return jobs


def test_the_pages_other_model_calls_agree_under_threads(full_size, report_result):
    models = shared_models((str(DEFAULT_CHECKPOINT), str(GRU_CHECKPOINT)))
    transformer, gru = models[str(DEFAULT_CHECKPOINT)], models[str(GRU_CHECKPOINT)]
    digests = {path: weights_digest(loaded.model) for path, loaded in models.items()}
    sentences = english_sentences(16)
    jobs = page_jobs(transformer, gru, sentences)
    names = list(jobs)
    [serial_results], serial_threads, _ = run_together([[jobs[name] for name in names]])  # one at a time
    serial = {name: plain(result) for name, result in zip(names, serial_results)}

    # Every thread runs every job, each starting at a different place in the list, so different
    # kinds of call overlap; --full repeats the whole exercise.
    rounds = 3 if full_size else 1
    for _ in range(rounds):
        orders = [names[k * len(names) // THREADS :] + names[: k * len(names) // THREADS] for k in range(THREADS)]
        results, torch_threads, elapsed = run_together([[jobs[name] for name in order] for order in orders])
        assert torch_threads == serial_threads
        differences = [
            f"{name}{first_difference(plain(got), serial[name])}"
            for order, got_all in zip(orders, results)
            for name, got in zip(order, got_all)
            if plain(got) != serial[name]
        ]
        assert not differences, f"{len(differences)} results differ from the serial run: {differences[:3]}"
    for path, loaded in models.items():
        assert weights_digest(loaded.model) == digests[path] and loaded.model.training is False
    report_result(
        "concurrency (other page calls)",
        f"{THREADS} threads × {len(names)} calls × {rounds} round(s) (batch/beam translation, branch, position "
        f"ablation, mask lab, GRU): all bitwise identical to serial; last round {elapsed:.1f} s",
    )
