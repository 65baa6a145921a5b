"""numba is bounded above the newest release the runtime patches were tested with
(``spacy_depner/numba_runtime`` patches numba's internals), CI pins that release and
runs the cache-lock tests against the lowest allowed too, and the installed numba is
within the bounds."""

import re
from pathlib import Path

import numba

ROOT = Path(__file__).resolve().parents[2]


def version(text: str) -> tuple:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def numba_bounds() -> tuple:
    """(lowest, first excluded) of pyproject.toml's numba requirement."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf8")
    found = re.search(r'"numba>=([\d.]+),<([\d.]+)"', text)
    assert found, "pyproject.toml: numba needs an upper bound (the next minor release after the newest tested)"
    return version(found.group(1)), version(found.group(2))


def test_numba_is_bounded_above_and_the_installed_one_is_within():
    lowest, excluded = numba_bounds()
    assert lowest <= version(numba.__version__) < excluded


def test_ci_tests_the_cache_lock_on_the_lowest_and_the_highest_numba():
    lowest, excluded = numba_bounds()
    run = (ROOT / ".ci" / "run").read_text(encoding="utf8")
    (pinned_low,) = re.findall(r"numba_lowest=\(numba==([\d.]+)", run)
    assert version(pinned_low)[:2] == lowest[:2]
    assert "tests/numba_runtime/test_cache_lock.py" in run.split("numba_lowest=", 1)[1]
    constraints = (ROOT / ".ci" / "constraints.txt").read_text(encoding="utf8")
    (pinned_high,) = re.findall(r"^numba==([\d.]+)$", constraints, re.MULTILINE)
    assert version(pinned_high)[:2] == (excluded[0], excluded[1] - 1), "pin the newest minor release allowed"
