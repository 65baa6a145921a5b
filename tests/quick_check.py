"""The files of the quick check (``pytest -m quick``, the README's): their
fast tests get the ``quick`` marker (tests/conftest.py)."""

# One or more files per layer, paths under tests/.
QUICK = (
    "structures/test_protocol.py",
    "structures/test_candidate_spans.py",
    "readers/test_reader_errors.py",
    "evaluation/test_metrics.py",
    "evaluation/test_span_judging.py",
    "evaluation/test_threshold_tuning.py",
    "pipeline/test_factory_validation.py",
    "cli/test_errors.py",
    "cli/test_convert.py",
    "cli/test_conventions.py",
    "cli/test_apply_conventions.py",
    "test_layers.py",
    "test_readme.py",
)
