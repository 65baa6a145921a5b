"""The example budgets' profile (``budgets``): fast when the run deselects
the slow tests (``-m "not slow"``), full otherwise."""

import os

import budgets


def pytest_configure(config):
    if "DEPNER_BUDGET" not in os.environ:
        budgets.PROFILE = "fast" if "not slow" in (config.getoption("markexpr") or "") else "full"
