"""Start the app with `streamlit run` on loopback and drive Debian's Chromium with Playwright."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.io.paths import ROOT

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


# Browser tests skip on a machine without Debian's Chromium, except in CI (scripts/test.sh installs it).
needs_chromium = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and shutil.which("streamlit")) and not os.environ.get("CI"),
    reason="Debian chromium not installed (scripts/test.sh installs it)",
)


def assert_no_errors(page) -> None:
    """No traceback and no error box on the page."""
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stAlertContentError']").count() == 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running_app(timeout: float = 90) -> Iterator[str]:
    """Yield the base URL of a fresh `streamlit run app.py` server; stop it afterwards."""
    with serving_app(timeout) as (url, _):
        yield url


@contextlib.contextmanager
def serving_app(timeout: float = 90, script: Path = ROOT / "app.py") -> Iterator[tuple[str, subprocess.Popen]]:
    """Like running_app, and also the server process (its memory is measured by the benchmark);
    `script` another Streamlit script (the benchmark's hello-world page)."""
    port = free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", str(script),
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
        "--server.address", "127.0.0.1", "--server.port", str(port),
    ]  # fmt: skip
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"streamlit did not start: {server.stdout.read().decode()[-2000:]}") from None
                time.sleep(0.5)
        yield url, server
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


@contextlib.contextmanager
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def wait_for_app(page, charts: int = 1, timeout: float = 90_000) -> None:
    """Wait until the script has finished running and at least `charts` plotly charts are drawn."""
    page.wait_for_selector("[data-testid='stApp']", timeout=timeout)
    page.wait_for_function(
        "n => document.querySelectorAll('.js-plotly-plot .main-svg').length >= n", arg=charts, timeout=timeout
    )
    page.wait_for_selector("[data-testid='stStatusWidget']", state="detached", timeout=timeout)


def go_to(page, link: str, title: str, charts: int, timeout: float = 90_000) -> None:
    """Follow a sidebar link and wait for that page to finish. Waiting for its title first matters:
    just after the click, the previous page is still shown and may already have enough charts."""
    page.get_by_role("link", name=link).click()
    page.wait_for_function("t => document.querySelector('h1')?.innerText === t", arg=title, timeout=timeout)
    wait_for_app(page, charts=charts, timeout=timeout)
