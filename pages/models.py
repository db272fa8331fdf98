"""Models page: choose the shipped model or upload a checkpoint (for this browser session only),
read its intake report and model card, watch attention form during training, compare two models."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.explain import compare, model_card
from core.figures import attention as figures
from core.figures import training as figures_training
from pages.ui import display, page, session_models
from pages.ui.widgets import sentence_box

page.page_setup()
st.title("Models")

st.header("Active model")
models = session_models.available()
labels = list(models)
if st.session_state.get(session_models.ACTIVE_KEY) not in labels:
    st.session_state[session_models.ACTIVE_KEY] = session_models.SHIPPED
st.radio(
    "Every page of this browser tab uses",
    labels,
    key=session_models.ACTIVE_KEY,
    help="Uploads stay in this browser session only; other people using the app keep their own model.",
)

st.header("Upload a checkpoint")
st.file_uploader(
    "A .safetensors or .pt file written by core.train",
    # No type= filter: Streamlit would refuse other files with an exception; this page explains instead.
    key=session_models.UPLOADER_KEY,
    on_change=session_models.on_upload,
    help="See the README, “Train your own model”. Nothing in the file is executed: tensors and JSON only.",
)
st.caption(
    f"Up to {session_models.MAX_UPLOAD_MB} MB per file and {session_models.MAX_MODEL_MB} MB of weights in memory; "
    f"this tab keeps its {session_models.MAX_SESSION_UPLOADS} latest uploads."
)
if error := st.session_state.get(session_models.ERROR_KEY):
    st.error(display.md_literal(error))


def show_facts(rows: list[tuple[str, str]]) -> None:
    """(label, value) rows as a static table; the training command separately, to copy."""
    command = dict(rows).get("Training command")
    if command:
        st.code(command, language="bash", wrap_lines=True)
    rows = [(label, value) for label, value in rows if label != "Training command"]
    st.table(pd.DataFrame({"value": [v for _, v in rows]}, index=[label for label, _ in rows]))


def show_intake(upload: session_models.Upload) -> None:
    report = upload.report
    st.success(f"Loaded {display.md_literal(report.file_name)}: {report.format}, {report.size_bytes / 2**20:.1f} MB.")
    left, right = st.columns(2)
    with left:
        st.caption("Configuration")
        show_facts(report.config)
    with right:
        st.caption("Checks")
        show_facts(
            [
                ("Format", report.format),
                ("SHA-256", report.sha256),
                ("Tensors", report.tensor_check),
                (
                    "Smoke test",
                    f"“{model_card.SMOKE_SENTENCE}” → “{report.smoke_translation}” ({report.smoke_ms:.0f} ms)",
                ),
            ]
        )
        if not report.card:
            st.warning("The file has no training card (command, data hash, scores): only its weights can be checked.")
    if report.card:
        with st.expander("Its card (in full below while it is the active model)"):
            show_facts(report.card)
    with st.expander(f"All {len(report.tensors)} tensors (name, shape, dtype as stored)"):
        st.dataframe(report.tensors, hide_index=True, width="stretch")


uploaded = session_models.uploads()
if uploaded:
    latest_label = list(uploaded)[-1]
    st.subheader(f"Intake report: {latest_label}")
    show_intake(uploaded[latest_label])

loaded = session_models.active_model()
active = session_models.active_label()
st.header(f"Model card: {active}")
card = loaded.model_card
facts = model_card.card_facts(card)
if facts:
    show_facts(facts)
else:
    st.info("This checkpoint has no card: it was not written by core.train, or its card was removed.")
splits = model_card.split_table(card)
if splits is not None:
    st.caption("Data split (by English sentence, so no sentence is in two splits)")
    st.dataframe(splits, hide_index=True)
history = model_card.history_frame(card)
if history is not None:
    display.chart(figures_training.training_curves(history, "Training, epoch by epoch"), "curves")

snapshots = model_card.attention_snapshots(card)
if snapshots:
    st.subheader("Attention evolution")
    st.caption(
        "Cross-attention of probe sentences saved after every epoch (mean of all layers and heads). "
        "Watch the alignment between Chinese and English form; the decoder rows are what the model produced then."
    )
    probes = [m.sentence for m in snapshots[-1][1]]
    probe = st.selectbox("Probe sentence", probes, key="probe")
    epochs = [epoch for epoch, _ in snapshots]
    epoch = st.select_slider("Epoch", epochs, value=epochs[-1], key="snapshot_epoch")
    maps = {m.sentence: m for m in dict(snapshots)[epoch]}
    if probe in maps:
        m = maps[probe]
        display.chart(
            figures.attention_heatmap(m.cross, m.decoder_tokens, m.source_tokens, f"epoch {epoch}: {probe}", zmax=1.0),
            "evolution",
        )

st.header("Compare two models")
st.caption("The Compare page sets the Transformer's attention beside the GRU's, on one colour scale.")
left, right = st.columns(2)
first = left.selectbox("Model A", labels, index=0, key="compare_a")
second = right.selectbox("Model B", labels, index=len(labels) - 1, key="compare_b")
text = sentence_box()
results = []
for label in (first, second):
    trace = page.get_trace(models[label], text)
    if trace is None:
        st.stop()
    results.append((label, trace))
display.side_by_side(*((label, trace.translation) for label, trace in results))
comparison = compare.config_table({"A": models[first], "B": models[second]})
st.dataframe(comparison, width="stretch")
