"""Which model each browser session uses: the shipped one (shared by all, read-only) or a
checkpoint this session uploaded. Uploads live in this session's state only, at most
MAX_SESSION_UPLOADS of them (the oldest is dropped), each bounded in file size and memory."""

from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st

from core.explain.model_card import IntakeReport, intake_report
from core.io.checkpoint import CheckpointError, LoadedModel, load_checkpoint
from core.io.paths import DEFAULT_CHECKPOINT, GRU_CHECKPOINT

SHIPPED = f"Shipped Transformer ({DEFAULT_CHECKPOINT.name})"
SHIPPED_GRU = f"Shipped GRU + Bahdanau attention ({GRU_CHECKPOINT.name})"
SHIPPED_FILES = {SHIPPED: DEFAULT_CHECKPOINT, SHIPPED_GRU: GRU_CHECKPOINT}
ACTIVE_KEY = "model"  # session state: label of the active model
UPLOADS_KEY = "uploads"  # session state: label -> Upload
UPLOADER_KEY = "upload_file"
ERROR_KEY = "upload_error"
MAX_SESSION_UPLOADS = 2
MAX_UPLOAD_MB = 100  # also server.maxUploadSize in .streamlit/config.toml; checked here as well
MAX_MODEL_MB = 400  # float32 weights and buffers of one uploaded model
SUFFIXES = (".safetensors", ".pt")


@dataclass
class Upload:
    loaded: LoadedModel
    report: IntakeReport


@st.cache_resource(show_spinner="Loading the model…")
def shipped_model(path: str = str(DEFAULT_CHECKPOINT)) -> LoadedModel:
    """Loaded once per process and shared by every session: never modified (eval mode, no grads)."""
    return load_checkpoint(path)


def uploads() -> dict[str, Upload]:
    return st.session_state.setdefault(UPLOADS_KEY, {})


def available() -> dict[str, LoadedModel]:
    """label -> model, for every model this session may use."""
    models = {label: shipped_model(str(path)) for label, path in SHIPPED_FILES.items()}
    models.update({label: upload.loaded for label, upload in uploads().items()})
    return models


def active_label() -> str:
    label = st.session_state.get(ACTIVE_KEY, SHIPPED)
    return label if label in SHIPPED_FILES or label in uploads() else SHIPPED


def active_model() -> LoadedModel:
    """The model this session uses."""
    return available()[active_label()]


def load_upload(name: str, data: bytes) -> Upload:
    """Check and load an uploaded file; raise CheckpointError with a message for the user."""
    if not name.lower().endswith(SUFFIXES):
        raise CheckpointError(f"“{name}” is not a checkpoint: upload a .safetensors or .pt file written by core.train")
    if len(data) > MAX_UPLOAD_MB * 2**20:
        raise CheckpointError(f"the file has {len(data) / 2**20:,.0f} MB; this app accepts up to {MAX_UPLOAD_MB} MB")
    loaded = load_checkpoint(data, max_model_bytes=MAX_MODEL_MB * 2**20)
    return Upload(loaded, intake_report(loaded, name, data))


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
