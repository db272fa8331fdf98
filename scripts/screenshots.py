"""Screenshots of every page in headless Chromium: python scripts/screenshots.py OUT_DIR [query]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.browser import browser, running_app, wait_for_app  # noqa: E402

PAGES = ("translate", "attention")


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")
    query = sys.argv[2] if len(sys.argv) > 2 else ""
    out.mkdir(parents=True, exist_ok=True)
    with running_app() as url, browser() as chromium:
        page = chromium.new_page(viewport={"width": 1400, "height": 2600})
        for name in PAGES:
            page.goto(f"{url}/{name if name != PAGES[0] else ''}{query}")
            wait_for_app(page, charts=3)
            page.wait_for_timeout(1500)
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            print(out / f"{name}.png")


if __name__ == "__main__":
    main()
