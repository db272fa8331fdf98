"""Session-state keys shared between pages. Each is also a URL query parameter, so a link
reproduces the view:
- "text": the English sentence, used by every page.
- "step": the decoding step on the Translate page (1-based).
- "layer", "head": "mean" or a 1-based number; "kind": encoder / decoder / cross.
- "large_type": large type for talks.
"""

from __future__ import annotations

import streamlit as st

from pages.ui.session_models import ACTIVE_KEY

SENTENCE_KEY = "text"
LARGE_TYPE_KEY = "large_type"


def keep_shared_state() -> None:
    """Widget values vanish when a page without that widget runs; re-storing keeps the sentence
    and the chosen model when the user switches pages."""
    for key in (SENTENCE_KEY, ACTIVE_KEY):
        if key in st.session_state:
            st.session_state[key] = st.session_state[key]


def large_type() -> bool:
    return bool(st.session_state.get(LARGE_TYPE_KEY, False))
