"""Writing a training run's checkpoint (best weights + card) and its resume state, as training goes."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import torch

from core.io.card import AttentionSnapshots, HeldOutScores, ModelCard
from core.io.checkpoint import save_checkpoint
from core.model.config import ModelConfig
from core.model.registry import build_model
from core.training.trainer import PROBE_SENTENCES, Trainer


class RunWriter:
    """Writes OUT (the checkpoint, with the card as it stands) and OUT.state.pt (for --resume)."""

    def __init__(self, out: Path, model_config: ModelConfig, card: ModelCard, half: bool, started: float):
        self.out = out
        self.state_path = out.with_name(out.name + ".state.pt")
        self.model_config = model_config
        self.card = card  # what is known before training; history and scores are added at each write
        self.half = half
        self.started = started  # time.perf_counter() when the run began

    def write(
        self,
        trainer: Trainer,
        weights: dict[str, torch.Tensor] | None = None,
        test: HeldOutScores | None = None,
        status: str | None = None,
    ) -> None:
        """The checkpoint holds `weights` (default: the model's current ones)."""
        model = build_model(self.model_config)
        model.load_state_dict(weights if weights is not None else trainer.model.state_dict())
        card = replace(
            self.card,
            history=trainer.history,
            best_epoch=trainer.best.epoch,
            attention_snapshots=AttentionSnapshots(list(PROBE_SENTENCES), trainer.snapshots),
            date=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            training_minutes=round((time.perf_counter() - self.started) / 60, 1),
            test=test,
            status=status,
        )
        save_checkpoint(self.out, model, trainer.pipeline, card, half=self.half)
        torch.save(trainer.state(), self.state_path)
