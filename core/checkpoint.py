"""`core.checkpoint.load_checkpoint`, the documented entry point; the loader lives in core.io.checkpoint."""

from core.io.checkpoint import CheckpointError, LoadedModel, load_checkpoint, save_checkpoint

__all__ = ["CheckpointError", "LoadedModel", "load_checkpoint", "save_checkpoint"]
