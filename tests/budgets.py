"""How many random examples each randomized test draws, set in one place.

Two profiles: ``full`` (the counts the exactness claims rest on; what CI
runs, with the slow tests) and ``fast`` (the default of a developer's
``pytest -m "not slow"``: about a tenth, every test still drawing some).
``tests/conftest.py`` picks the profile from the marker expression:
``fast`` when it deselects the slow tests, ``full`` otherwise; the
environment variable ``DEPNER_BUDGET=full|fast`` overrides it.
"""

import os

FULL = {
    "candidate_spans.random": 3000,
    "candidate_spans.small": 300,
    "candidate_spans.hypothesis": 1000,
    "forest.random": 2000,
    "forest.cycles": 4000,
    "forest.hypothesis": 500,
    "linear_chain.sequences": 600,
    "linear_chain.long": 300,
    "protocol.random": 300,
    "partial.random": 150,
    "component_fuzz": 2000,
    "reader_fuzz": 2000,
    "reader_fuzz.valid": 150,
}
FAST_SHARE = 10

PROFILE = os.environ.get("DEPNER_BUDGET", "full")


def cases(name: str) -> int:
    """The number of examples of the test budget ``name`` in the current profile."""
    full = FULL[name]
    return full if PROFILE == "full" else max(10, full // FAST_SHARE)
