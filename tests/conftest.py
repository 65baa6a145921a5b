"""The example budgets' profile (``budgets``): fast when the run deselects
the slow tests (``-m "not slow"``, or ``-m quick``), full otherwise; the
``quick`` marker on the fast tests of the QUICK files. Tests that need an
optional extra skip, with the extra to install, when it is missing: a test
marked ``@pytest.mark.extra("NAME")``, and a test run on a config whose
encoder is a torch layer (the GENIA recipe's ``spacy.TorchBiLSTMEncoder.v1``,
which thinc builds only with torch, from the ``project`` extra) when it
fails only for want of torch."""

import os
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

import budgets
import pytest
from quick_check import QUICK

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
# The modules each optional extra of pyproject.toml installs, as imported.
EXTRAS = {
    "project": ("matplotlib", "torch"),
    "ray": ("ray",),
    "transformers": ("spacy_transformers", "transformers", "torch"),
    "curated-transformers": ("spacy_curated_transformers", "torch"),
    "docs": ("mkdocs", "material"),
    "lint": ("ruff",),
}
TORCH_LAYER = '"spacy.Torch'  # an @architectures value of spaCy's torch layers (TorchBiLSTMEncoder)
TESTS = Path(__file__).resolve().parent


def pytest_configure(config):
    if "DEPNER_BUDGET" not in os.environ:
        markers = config.getoption("markexpr") or ""
        budgets.PROFILE = "fast" if "not slow" in markers or "quick" in markers else "full"
    config.addinivalue_line(
        "markers", "extra(name): needs the optional extra NAME of pyproject.toml (skipped with its name without it)"
    )
    config.addinivalue_line("markers", "torch_config: runs on a config with a torch layer (set by this conftest)")
    config.addinivalue_line("markers", "quick: the quick check, the fast tests of QUICK's files (set by this conftest)")


def missing(extra: str) -> list:
    """The modules of ``extra`` that cannot be imported."""
    return [module for module in EXTRAS[extra] if find_spec(module) is None]


@lru_cache(maxsize=None)
def uses_torch_layer(path: Path) -> bool:
    """Whether the config ``path`` (or, for a model part under configs/models, the config composed from it)
    builds a torch layer."""
    if path.suffix != ".cfg" or not path.is_file():
        return False
    if path.parent.name == "models" and path.parent.parent == CONFIGS:
        from experiments.configs.compose import composed_path

        path = composed_path(CONFIGS, path.stem)
    return path.is_file() and TORCH_LAYER in path.read_text(encoding="utf8")


def pytest_collection_modifyitems(config, items):
    quick = {TESTS / name for name in QUICK}
    for item in items:
        if Path(item.path).resolve() in quick and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.quick)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(isinstance(value, Path) and uses_torch_layer(value) for value in params.values()):
            item.add_marker(pytest.mark.torch_config)


def skip_reason(extra: str) -> str:
    return f"needs {', '.join(missing(extra))}, of the {extra} extra: pip install -e '.[{extra}]' in the checkout"


def pytest_runtest_setup(item):
    for marker in item.iter_markers("extra"):
        (extra,) = marker.args
        if missing(extra):
            pytest.skip(skip_reason(extra))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test on a torch-layer config that fails only because torch is missing (thinc's ModuleNotFoundError
    when it builds the layer) is skipped, naming the extra; with torch, or failing otherwise, it stands."""
    outcome = yield
    report = outcome.get_result()
    if (
        report.when == "call"
        and report.failed
        and item.get_closest_marker("torch_config") is not None
        and call.excinfo.errisinstance(ModuleNotFoundError)
        and call.excinfo.value.name == "torch"
        and missing("project")
    ):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1], f"Skipped: {skip_reason('project')}")
