"""What the Heads page computes: which heads a choice switches off, and where two translations
differ, character by character."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from core.model.config import ModelConfig
from core.model.intervention import HeadRef
from core.model.registry import all_heads


def ablated_heads(config: ModelConfig, chosen: Iterable[HeadRef], keep_only: bool) -> frozenset[HeadRef]:
    """The chosen heads, or with keep_only every other head of each attention kind in which some
    head was chosen (a kind with nothing chosen is left whole)."""
    chosen = frozenset(chosen)
    if not keep_only:
        return chosen
    kinds = {head.kind for head in chosen}
    return frozenset(head for head in all_heads(config) if head.kind in kinds and head not in chosen)


def changed_characters(original: str, changed: str) -> list[tuple[str, bool]]:
    """`changed` cut into runs, each marked True where it differs from `original` (inserted or
    replaced characters); deletions have no characters of their own to mark."""
    runs: list[tuple[str, bool]] = []
    matcher = difflib.SequenceMatcher(a=original, b=changed, autojunk=False)
    for tag, _, _, start, end in matcher.get_opcodes():
        if end > start:
            runs.append((changed[start:end], tag != "equal"))
    return runs
