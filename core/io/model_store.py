"""Uploaded models for a whole server: one copy per file (by content hash), however many sessions
upload it, within a memory budget; the least recently used model goes when a new one needs room.

Sessions keep only the hash and ask the store on every run: a model that was evicted is simply
not there any more, so no session can ever be handed a wrong one."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable

from core.io.checkpoint import CheckpointError, LoadedModel

BUDGET_ENV = "TRANSLUCENT_UPLOAD_BUDGET_MB"  # the server's budget for uploaded models, in MiB
DEFAULT_BUDGET_MB = 2048


def budget_from_env() -> int:
    """The budget in bytes: $TRANSLUCENT_UPLOAD_BUDGET_MB, else 2 GiB. A bad value is an error at
    start-up, not a silent default."""
    text = os.environ.get(BUDGET_ENV, "").strip()
    if not text:
        return DEFAULT_BUDGET_MB * 2**20
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{BUDGET_ENV}={text!r}: expected a whole number of MiB, at least 1")
    return int(text) * 2**20


def model_bytes(loaded: LoadedModel) -> int:
    """Memory held by the model's tensors (parameters and buffers)."""
    return sum(t.numel() * t.element_size() for t in loaded.model.state_dict(keep_vars=True).values())


class ModelStore:
    """Thread-safe: every browser session of the server shares one store."""

    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self._models: OrderedDict[str, tuple[LoadedModel, int]] = OrderedDict()  # oldest use first
        self._lock = threading.Lock()

    def get(self, sha256: str) -> LoadedModel | None:
        """The model of this file if the store still holds it (and mark it as just used)."""
        with self._lock:
            if sha256 not in self._models:
                return None
            self._models.move_to_end(sha256)
            return self._models[sha256][0]

    def add(self, sha256: str, load: Callable[[], LoadedModel]) -> LoadedModel:
        """The stored model of this file, or load(), store and return it, evicting the least recently
        used models until it fits. CheckpointError when the model alone is over the budget."""
        if (known := self.get(sha256)) is not None:
            return known
        loaded = load()  # outside the lock: loading takes a while and other sessions go on
        size = model_bytes(loaded)
        if size > self.budget_bytes:
            raise CheckpointError(
                f"the model needs {size / 2**20:,.0f} MiB; this server keeps at most "
                f"{self.budget_bytes / 2**20:,.0f} MiB of uploaded models"
            )
        with self._lock:
            if sha256 in self._models:  # another session loaded the same file meanwhile: share theirs
                self._models.move_to_end(sha256)
                return self._models[sha256][0]
            self._models[sha256] = (loaded, size)
            while self._used() > self.budget_bytes:
                self._models.popitem(last=False)
            return loaded

    def _used(self) -> int:
        return sum(size for _, size in self._models.values())

    def used_bytes(self) -> int:
        with self._lock:
            return self._used()

    def __len__(self) -> int:
        return len(self._models)

    def __contains__(self, sha256: str) -> bool:
        return sha256 in self._models
