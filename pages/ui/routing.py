"""Making sure every page runs under app.py's router."""

from __future__ import annotations

import contextlib
import runpy
from collections.abc import Iterator
from contextvars import ContextVar

import streamlit as st

from core.io.paths import ROOT

_ROUTED: ContextVar[bool] = ContextVar("translucent_routed", default=False)


@contextlib.contextmanager
def routed() -> Iterator[None]:
    """app.py runs the chosen page inside this, so the page knows the router ran."""
    token = _ROUTED.set(True)
    try:
        yield
    finally:
        _ROUTED.reset(token)


def ensure_router() -> None:
    """On a fresh server, a deep link such as /attention?text=... is run by Streamlit's legacy
    pages/ mode without app.py (no wide layout, wrong sidebar). Hand such a run to the router,
    which then runs this page properly."""
    if not _ROUTED.get():
        runpy.run_path(str(ROOT / "app.py"), run_name="__main__")
        st.stop()
