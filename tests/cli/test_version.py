"""``python -m spacy_depner --version``: the installed distribution's version."""

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest


@pytest.mark.slow
def test_version_is_the_installed_distributions():
    done = subprocess.run(
        [sys.executable, "-m", "spacy_depner", "--version"],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"spacy-depner {version('spacy-depner')}"
