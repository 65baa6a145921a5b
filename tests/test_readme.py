"""The README is a quick start: short, and its code blocks marked
``<!-- runnable -->`` run as a new user pastes them (a fresh process in an
empty folder) and print entities."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).parents[1] / "README.md"
RUNNABLE = re.compile(r"<!-- runnable -->\n```python\n(.*?)\n```", re.S)


def runnable_blocks():
    return RUNNABLE.findall(README.read_text(encoding="utf8"))


def test_readme_is_a_quick_start():
    text = README.read_text(encoding="utf8")
    assert len(text.splitlines()) <= 250
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## Install", "## First example"]
    assert len(runnable_blocks()) >= 2
    assert text.index("python -m pytest -m quick") < text.index("python -m pytest -q -n auto\n")


def test_readme_says_what_each_extra_is_for_and_how_long_the_tests_take():
    """Each extra of pyproject.toml is named with its use; the quick check
    (the ``quick`` marker: the fast tests of tests/quick_check.py's QUICK
    files, one or more per layer) and the whole suite's time are given."""
    from quick_check import QUICK

    text = README.read_text(encoding="utf8")
    pyproject = (README.parent / "pyproject.toml").read_text(encoding="utf8")
    section = pyproject.split("[project.optional-dependencies]\n")[1].split("\n[")[0]
    extras = re.findall(r"^([\w-]+) = \[", section, re.M)
    assert {"test", "dev", "ray"} <= set(extras)
    for extra in extras:
        assert re.search(rf"`\.\[{re.escape(extra)}\]`\s+\([^)]+\)", text), extra
    tests = text[text.index("## Tests") :].split("\n## ")[0]
    assert "python -m pytest -m quick -q" in tests and "about 20 minutes" in tests
    assert all((README.parent / "tests" / name).is_file() for name in QUICK)
    layers = {Path(name).parts[0] for name in QUICK if "/" in name}
    assert {"structures", "readers", "evaluation", "pipeline", "cli"} <= layers


def test_readme_links_point_at_files(tmp_path):
    text = README.read_text(encoding="utf8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert local and all((README.parent / t).exists() for t in local), [
        t for t in local if not (README.parent / t).exists()
    ]


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(runnable_blocks())))
def test_runnable_block_prints_entities(index, tmp_path):
    block = runnable_blocks()[index]
    done = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines()]
    # "text LABEL probability" rows, at least two entities, each probability in (0.5, 1]
    scored = [row for row in rows if len(row) >= 3 and re.fullmatch(r"[01]\.\d\d", row[-1])]
    assert len(scored) >= 2 and all(0.5 < float(row[-1]) <= 1.0 for row in scored), done.stdout
    # a block that renders displaCy writes the page and prints "displaCy: PATH"; the page draws the printed labels
    pages = [Path(line.split(maxsplit=1)[1]) for line in done.stdout.splitlines() if line.startswith("displaCy: ")]
    assert pages or "displacy.render" not in block, "the block renders displaCy HTML but writes no page"
    for page in pages:
        drawn = " ".join(page.read_text(encoding="utf8").split())
        assert page.parent == tmp_path and all(f"> {row[-2]} <" in drawn for row in scored), page  # each label drawn
