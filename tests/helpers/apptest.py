"""Driving the app in Streamlit's AppTest: open a page (with URL query parameters), find a chart by
its key, read the HTML the page wrote."""

import html
import json

from streamlit.testing.v1 import AppTest

from core.io.paths import ROOT

APP = str(ROOT / "app.py")  # AppTest needs the absolute path


def open_app(page: str = "translate", timeout: float = 30, **query: str) -> AppTest:
    """Run the app (the Translate page), then switch to `page`; fail on any exception."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    if page != "translate":
        at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def chart(at: AppTest, key: str) -> dict:
    """The plotly figure (as its JSON spec) of the chart shown with `key`."""
    charts = [c for c in at.get("plotly_chart") if c.proto.id.endswith(f"-{key}")]
    assert len(charts) == 1, f"{len(charts)} charts with key {key!r}"
    return json.loads(charts[0].proto.spec)


def chart_keys(at: AppTest) -> list[str]:
    return [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")]


def html_text(at: AppTest) -> str:
    """Everything the page wrote with st.html, joined."""
    return " ".join(h.proto.body for h in at.get("html"))


def sidebar_model(at: AppTest) -> str:
    return next(c.value for c in at.sidebar.caption if c.value.startswith("Model:"))


def ticks(figure: dict, axis: str = "xaxis") -> list[str]:
    """A token axis's labels as the reader sees them (figures escape plotly's markup in tokens)."""
    return [html.unescape(label) for label in figure["layout"][axis]["ticktext"]]


def shown(text: str) -> str:
    """A figure's text as the reader sees it."""
    return html.unescape(text)
