#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine, then runs it all.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q -r requirements-dev.txt
if [ ! -x /usr/bin/chromium ]; then  # Debian's Chromium for the browser tests (never `playwright install`)
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium >/dev/null
fi
python3 -m ruff check app.py pages core bench tests scripts
python3 -m ruff format --check app.py pages core bench tests scripts
python3 -m pytest -q
