"""Where the project's shipped files live."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"
DEFAULT_CHECKPOINT = ASSETS / "translucent-en-zh.safetensors"
GRU_CHECKPOINT = ASSETS / "translucent-en-zh-gru.safetensors"  # the GRU + Bahdanau attention model
