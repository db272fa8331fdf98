"""Screenshots of every page in headless Chromium: python scripts/screenshots.py OUT_DIR [query]"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.browser import browser, running_app, wait_for_app  # noqa: E402

# page -> (charts drawn when it is ready, viewport height: Streamlit scrolls inside the page, so a
# full-page screenshot shows only the viewport)
PAGES = {
    "translate": (3, 2600),
    "attention": (3, 2600),
    "positions": (8, 4600),
    "masks": (7, 4000),
    "models": (2, 3000),
    "compare": (2, 2000),
}


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")
    query = sys.argv[2] if len(sys.argv) > 2 else ""
    out.mkdir(parents=True, exist_ok=True)
    with running_app() as url, browser() as chromium:
        for name, (charts, height) in PAGES.items():
            page = chromium.new_page(viewport={"width": 1400, "height": height})
            page.goto(f"{url}/{name if name != 'translate' else ''}{query}")
            wait_for_app(page, charts=charts)
            page.wait_for_timeout(1500)
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            print(out / f"{name}.png")


if __name__ == "__main__":
    main()
