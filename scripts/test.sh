#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine, then runs it all.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -r requirements-dev.txt
python3 -m ruff check core tests scripts && python3 -m ruff format --check core tests scripts
python3 -m pytest -q
