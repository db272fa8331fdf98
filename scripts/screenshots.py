"""Screenshots of the app's pages in headless Chromium.

python scripts/screenshots.py OUT_DIR [--query "?text=..."] [--pages translate,attention] [--height PX]

The README's picture: python scripts/screenshots.py docs/images --pages translate --height 1250
(CJK glyphs need a font with Chinese characters, e.g. Debian's fonts-noto-cjk.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.helpers.browser import browser, running_app, wait_for_app  # noqa: E402

# page -> (charts drawn when it is ready, viewport height: Streamlit scrolls inside the page, so a
# full-page screenshot shows only the viewport)
PAGES = {
    "translate": (3, 2600),
    "attention": (3, 2600),
    "heads": (1, 1800),
    "explain": (4, 3400),
    "positions": (8, 4600),
    "masks": (7, 4000),
    "models": (2, 3000),
    "compare": (2, 2000),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="screenshots")
    parser.add_argument("--query", default="", help='URL query, e.g. "?text=Tom+is+taller+than+Mary."')
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated page names")
    parser.add_argument("--height", type=int, default=0, help="viewport height (default: each page's whole height)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with running_app() as url, browser() as chromium:
        for name in args.pages.split(","):
            charts, height = PAGES[name]
            page = chromium.new_page(viewport={"width": 1400, "height": args.height or height})
            page.goto(f"{url}/{name if name != 'translate' else ''}{args.query}")
            wait_for_app(page, charts=charts)
            page.wait_for_timeout(1500)
            page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            print(out / f"{name}.png")


if __name__ == "__main__":
    main()
