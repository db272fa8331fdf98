"""Stepping through a translation: Previous / Next / Play over the decoding steps. Plain logic on a
mapping (Streamlit's session state in the app, a dict in tests); no Streamlit here."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

STEP_KEY = "step"  # 1-based; also the step slider's key, kept in the URL
PLAYING_KEY = "playing"
TOGGLED_KEY = "play_toggled"


class StepPlayer:
    def __init__(self, state: MutableMapping[str, Any], total: int):
        self.state = state
        self.total = total
        if state.get(STEP_KEY) is not None and not 1 <= state[STEP_KEY] <= total:
            state[STEP_KEY] = 1  # a new, shorter sentence or a stale link

    @property
    def step(self) -> int:
        return self.state.get(STEP_KEY) or 1

    @property
    def playing(self) -> bool:
        return bool(self.state.get(PLAYING_KEY, False))

    def move(self, delta: int) -> None:
        """Previous (-1) or Next (+1), kept within the steps."""
        self.state[STEP_KEY] = min(self.total, max(1, self.step + delta))

    def toggle(self) -> None:
        """Play or pause; playing from the last step starts again at the first."""
        self.state[PLAYING_KEY] = not self.playing
        self.state[TOGGLED_KEY] = True  # the timer is set up by a full run, not the fragment's
        if self.playing and self.step >= self.total:
            self.state[STEP_KEY] = 1

    def take_toggle(self) -> bool:
        """Whether Play/Pause was just pressed (the page then needs a full rerun); clears it."""
        return bool(self.state.pop(TOGGLED_KEY, False))

    def tick(self) -> bool:
        """One timer tick while playing: advance a step. Returns True when playing just stopped at
        the last step (the page then needs a full rerun to stop its timer)."""
        if not self.playing:
            return False
        if self.step < self.total:
            self.state[STEP_KEY] = self.step + 1
            return False
        self.state[PLAYING_KEY] = False
        return True


BRANCH_PREFIX = "branch_"  # + 0-based step index: the token picked there, if any
PICKS_FOR_KEY = "picks_for"


def branch_key(index: int) -> str:
    return f"{BRANCH_PREFIX}{index}"


def forget_picks_of_other_sentences(state: MutableMapping[str, Any], owner: tuple[Any, ...]) -> None:
    """A branch pick belongs to the (model, sentence, ablation) it was made on: without this, a token
    picked for one sentence stays selected for the next one whenever it is among its candidates."""
    if state.get(PICKS_FOR_KEY) != owner:
        for key in [key for key in state if str(key).startswith(BRANCH_PREFIX)]:
            del state[key]
        state[PICKS_FOR_KEY] = owner
