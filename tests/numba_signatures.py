"""Counting numba signatures from an empty cache, for the slow signature
tests: a script run in a fresh process prints, as JSON on its last line, the
number of signatures each kernel compiled."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the script's closing lines: counts of the kernels defined in each module of MODULES
COUNT_KERNELS = """
counts = {}
for module in MODULES:
    for name, value in vars(module).items():
        if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
            counts[f"{module.__name__.rsplit('.', 1)[1]}.{name}"] = len(value.signatures)
"""


def signature_counts(script: str, folder: Path) -> dict:
    """Run ``script`` in a fresh process in ``folder`` with an empty numba
    cache there; the JSON object its last line prints."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=folder,
        # everything compiled in the counted process: none of its kernels loaded from a background compilation
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "NUMBA_CACHE_DIR": str(folder / "empty-cache"),
            "SPACY_DEPNER_BACKGROUND_COMPILE": "0",
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])
