"""Where the project's shipped files live."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository (core/io/paths.py is two levels down)
ASSETS = ROOT / "assets"
DEFAULT_CHECKPOINT = ASSETS / "translucent-en-zh.safetensors"
GRU_CHECKPOINT = ASSETS / "translucent-en-zh-gru.safetensors"  # the GRU + Bahdanau attention model
ATLAS_DIR = ASSETS / "atlas"  # precomputed head atlases (matched by checkpoint SHA-256) and their sentences
EXPLAIN_DIR = ASSETS / "explain"  # precomputed agreement tables of the explanation methods (by SHA-256)
