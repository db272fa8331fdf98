"""core/ is in layers (.importlinter): a lower layer never imports a higher one, figures are pure,
and core never imports Streamlit or the pages."""

import shutil
import subprocess

import pytest

from core.io.paths import ROOT


def test_import_contracts_are_kept():
    lint_imports = shutil.which("lint-imports")
    if lint_imports is None:
        pytest.fail("lint-imports is missing: pip install -r requirements-dev.txt")
    result = subprocess.run([lint_imports, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Contracts: 3 kept, 0 broken." in result.stdout
