"""Every module of spacy_depner and experiments imports on its own, in a fresh
interpreter: no import cycle hides behind the order in which a command line
happens to import things."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = ("spacy_depner", "experiments")


def module_names():
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


#: Run in one fresh interpreter: it imports the third-party libraries once,
#: then imports each module of ours in a forked child that has none of our
#: modules loaded (one child per core at a time), so every module is imported
#: on its own, as by ``python -c``.
FORKING_IMPORTER = """
import importlib, os, sys, traceback
import numba, numpy, spacy, srsly, thinc.api, typer  # noqa: the heavy third-party imports, once
packages = {PACKAGES!r}
assert not [m for m in sys.modules if m.split(".")[0] in packages], "a third-party import loaded our modules"
failed, running = 0, 0
for name in sys.argv[1:]:
    if running == os.cpu_count():  # one child per core at a time
        _, status = os.wait()
        failed, running = failed + (status != 0), running - 1
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(name)
        except BaseException:
            print(f"FAILED {{name}}: {{traceback.format_exc().strip().splitlines()[-1]}}", flush=True)
            os._exit(1)
        os._exit(0)
    running += 1
while running:
    _, status = os.wait()
    failed, running = failed + (status != 0), running - 1
sys.exit(1 if failed else 0)
"""


@pytest.mark.slow
def test_every_module_imports_on_its_own():
    names = module_names()
    assert "spacy_depner.evaluation.metrics" in names and "experiments.app" in names
    script = FORKING_IMPORTER.format(PACKAGES=PACKAGES)
    if not hasattr(os, "fork"):  # one interpreter per module (slower)
        failed = [
            name for name in names if subprocess.run([sys.executable, "-c", f"import {name}"], cwd=ROOT).returncode
        ]
        assert not failed, failed
        return
    done = subprocess.run([sys.executable, "-c", script, *names], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


@pytest.mark.parametrize(
    "package, expected",
    [
        (
            "spacy_depner",
            {
                "evaluate",
                "evaluate-nested",
                "coverage",
                "convert",
                "find-penalty",
                "find-threshold",
                "calibration-report",
                "calibrate",
                "apply",
                "apply-ray",
                "pretrain-text",
                "rank",
                "serve",
                "package",
                "first-stage-folds",
                "import-annotations",
                "compile",
            },
        ),
        (
            "experiments",
            {
                "study",
                "nested-study",
                "two-stage",
                "pretrained-first-stage",
                "bench",
                "bench-nested",
                "bench-apply",
                "bench-cold-start",
                "bench-types",
                "configs",
                "jackknife-trees",
                "confidence",
                "pretrain",
                "bench-stages",
                "bench-pipelines",
                "bench-structures",
                "transformer-report",
                "partial-study",
                "active-learning-study",
                "publish-results",
                "package",
            },
        ),
    ],
)
def test_each_command_line_has_its_commands_only(package, expected):
    """The library's command line has the user commands; the studies and benchmarks are the experiments'."""
    import importlib

    import typer.main

    app = importlib.import_module(f"{package}.cli.app" if package == "spacy_depner" else f"{package}.app").app
    assert set(typer.main.get_command(app).commands) == expected
    done = subprocess.run(
        [sys.executable, "-m", package, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "Usage" in done.stdout, done.stderr
