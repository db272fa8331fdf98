"""Which model each browser session uses: the shipped one (shared by all, read-only) or a
checkpoint this session uploaded. A session lists at most MAX_SESSION_UPLOADS uploads (the oldest
is dropped), each bounded in file size and memory; the models themselves live in one store for the
whole server (core.io.model_store): one copy per file, within a memory budget, least recently used
first out. A session whose model was evicted is told so and falls back to the shipped model."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

import streamlit as st

from core.explain.model_card import IntakeReport, intake_report
from core.io.checkpoint import CheckpointError, LoadedModel, load_checkpoint
from core.io.model_store import ModelStore, budget_from_env
from core.io.paths import DEFAULT_CHECKPOINT, GRU_CHECKPOINT

SHIPPED = f"Shipped Transformer ({DEFAULT_CHECKPOINT.name})"
SHIPPED_GRU = f"Shipped GRU + Bahdanau attention ({GRU_CHECKPOINT.name})"
SHIPPED_FILES = {SHIPPED: DEFAULT_CHECKPOINT, SHIPPED_GRU: GRU_CHECKPOINT}
ACTIVE_KEY = "model"  # session state: label of the active model
UPLOADS_KEY = "uploads"  # session state: label -> Upload
UPLOADER_KEY = "upload_file"
ERROR_KEY = "upload_error"
EVICTED_KEY = "upload_evicted"  # session state: labels of uploads the store no longer holds
MAX_SESSION_UPLOADS = 2
MAX_UPLOAD_MB = 100  # also server.maxUploadSize in .streamlit/config.toml; checked here as well
MAX_MODEL_MB = 400  # float32 weights and buffers of one uploaded model
SUFFIXES = (".safetensors", ".pt")


@dataclass
class Upload:
    """What a session keeps of an upload: the file's hash (its model is in the store) and its report."""

    sha256: str
    report: IntakeReport


@st.cache_resource(show_spinner="Loading the model…")
def shipped_model(path: str = str(DEFAULT_CHECKPOINT)) -> LoadedModel:
    """Loaded once per process and shared by every session: never modified (eval mode, no grads)."""
    return load_checkpoint(path)


@st.cache_resource(show_spinner=False)
def upload_store() -> ModelStore:
    """Every session's uploaded models, one store per server ($TRANSLUCENT_UPLOAD_BUDGET_MB)."""
    return ModelStore(budget_from_env())


def uploads() -> dict[str, Upload]:
    return st.session_state.setdefault(UPLOADS_KEY, {})


def available() -> dict[str, LoadedModel]:
    """label -> model, for every model this session may use. Uploads the store has evicted are
    dropped from the session here, and remembered for evicted_notice()."""
    models = {label: shipped_model(str(path)) for label, path in SHIPPED_FILES.items()}
    store = upload_store()
    for label, upload in list(uploads().items()):
        if (loaded := store.get(upload.sha256)) is None:
            del uploads()[label]
            st.session_state.setdefault(EVICTED_KEY, []).append(label)
        else:
            models[label] = loaded
    return models


def evicted_notice() -> str | None:
    """Once, after this session's upload was evicted: what happened and what to do."""
    labels = st.session_state.pop(EVICTED_KEY, None)
    if not labels:
        return None
    budget = upload_store().budget_bytes / 2**30
    return (
        f"Your uploaded model {', '.join(labels)} was removed from the server's memory to make room for "
        f"other people's uploads (the server keeps {budget:,.1f} GiB of uploaded models, least recently "
        "used first out). This page now uses the shipped model: upload the file again on the Models page "
        "to go on with it."
    )


def active_label() -> str:
    label = st.session_state.get(ACTIVE_KEY, SHIPPED)
    return label if label in SHIPPED_FILES or label in uploads() else SHIPPED


def active_model() -> LoadedModel:
    """The model this session uses (the shipped one if its upload was evicted)."""
    models = available()
    return models[active_label()]


def load_upload(name: str, data: bytes) -> Upload:
    """Check an uploaded file and put its model in the server's store (or find it there: the same
    file from another session is not loaded twice); raise CheckpointError with a message."""
    if not name.lower().endswith(SUFFIXES):
        raise CheckpointError(f"“{name}” is not a checkpoint: upload a .safetensors or .pt file written by core.train")
    if len(data) > MAX_UPLOAD_MB * 2**20:
        raise CheckpointError(f"the file has {len(data) / 2**20:,.0f} MB; this app accepts up to {MAX_UPLOAD_MB} MB")
    sha256 = hashlib.sha256(data).hexdigest()  # what load_checkpoint records as LoadedModel.sha256
    loaded = upload_store().add(sha256, lambda: load_checkpoint(data, max_model_bytes=MAX_MODEL_MB * 2**20))
    return Upload(sha256, intake_report(loaded, name, data))


def _plain(name: str) -> str:
    """A file name safe to show as a widget label (labels render markdown)."""
    return re.sub(r"[^A-Za-z0-9.\- ]", "-", name)[:80]


def on_upload() -> None:
    """Uploader callback (runs before the page script): load the file, make it the active model,
    or keep everything as it was and remember the message."""
    file = st.session_state.get(UPLOADER_KEY)
    st.session_state[ERROR_KEY] = None
    if file is None:
        return
    try:
        upload = load_upload(file.name, file.getvalue())
    except CheckpointError as err:
        st.session_state[ERROR_KEY] = f"“{file.name}” was not loaded: {err}"
        return
    except Exception as err:  # a file from outside must never crash the page; say what happened
        st.session_state[ERROR_KEY] = f"“{file.name}” was not loaded: unexpected {type(err).__name__}: {err}"
        return
    label = f"{_plain(file.name)} · {upload.report.sha256[:8]}"
    models = uploads()
    models.pop(label, None)
    models[label] = upload
    while len(models) > MAX_SESSION_UPLOADS:
        models.pop(next(iter(models)))
    st.session_state[ACTIVE_KEY] = label
