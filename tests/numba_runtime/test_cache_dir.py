"""numba's cache of compiled code lies outside the package (``numba_runtime.cache_dir``):
in ``NUMBA_CACHE_DIR`` when the user sets it, else in a per-user cache
directory, else in a temporary one; never in the package's ``__pycache__``,
where pip would leave it behind."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numba
import pytest
from numba_signatures import COUNT_KERNELS, signature_counts

from spacy_depner.numba_runtime import cache_dir as runtime_cache_dir

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "spacy_depner"
COMPILE = """
import numpy, os, spacy_depner
from spacy_depner.structures.shared import max_doc_length
assert max_doc_length(numpy.array([0, 3, 5])) == 3
print(spacy_depner.__file__)
print(os.environ["NUMBA_CACHE_DIR"])
"""


def cache_files(folder: Path) -> dict:
    """Every numba cache file below ``folder``, with its modification time."""
    return {path: path.stat().st_mtime_ns for suffix in ("*.nbi", "*.nbc") for path in folder.rglob(suffix)}


def compile_in_fresh_process(cwd: Path, **env) -> list[str]:
    """Run COMPILE with this checkout's package and ``env`` (a value of None
    removes the variable); return its lines: the package file, the cache dir."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, value in env.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    done = subprocess.run(
        [sys.executable, "-c", COMPILE], cwd=cwd, env=environ, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


@pytest.mark.slow
@pytest.mark.parametrize("user_set", [True, False])
def test_compiled_code_is_cached_outside_the_package(tmp_path, user_set):
    before = cache_files(PACKAGE)
    (tmp_path / "cwd").mkdir()
    if user_set:
        expected = tmp_path / "chosen"
        package_file, cache_dir = compile_in_fresh_process(tmp_path / "cwd", NUMBA_CACHE_DIR=str(expected))
    else:  # the default: the user cache directory ($XDG_CACHE_HOME on Linux)
        if sys.platform in ("win32", "darwin"):
            pytest.skip("XDG_CACHE_HOME is the Linux rule")
        expected = tmp_path / "xdg" / "spacy-depner" / "numba" / runtime_cache_dir.kernel_sources_fingerprint()
        package_file, cache_dir = compile_in_fresh_process(
            tmp_path / "cwd", NUMBA_CACHE_DIR=None, XDG_CACHE_HOME=str(tmp_path / "xdg")
        )
    assert Path(package_file) == PACKAGE / "__init__.py" and Path(cache_dir) == expected
    assert any(path.name.startswith("shared.max_doc_length") for path in cache_files(expected))
    assert cache_files(PACKAGE) == before  # nothing written into the package


@pytest.fixture
def no_user_setting(monkeypatch, tmp_path):
    """No NUMBA_CACHE_DIR, none in numba's config, and a user cache root in tmp_path."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    monkeypatch.setattr(runtime_cache_dir, "user_cache_root", lambda: tmp_path / "cache-home")
    return tmp_path / "cache-home" / "spacy-depner" / "numba" / runtime_cache_dir.kernel_sources_fingerprint()


def test_sets_the_variable_and_the_config_of_an_imported_numba(no_user_setting):
    assert runtime_cache_dir.use_user_cache_dir() == str(no_user_setting)
    assert (
        os.environ["NUMBA_CACHE_DIR"] == numba.config.CACHE_DIR == str(no_user_setting)
    )  # worker processes inherit it
    assert no_user_setting.is_dir()


def test_does_not_import_numba(no_user_setting, monkeypatch):
    monkeypatch.delitem(sys.modules, "numba")
    assert runtime_cache_dir.use_user_cache_dir() == str(no_user_setting)
    assert "numba" not in sys.modules


def test_the_user_setting_wins(no_user_setting, monkeypatch, tmp_path):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "config"))
    assert runtime_cache_dir.use_user_cache_dir() == str(tmp_path / "config") and "NUMBA_CACHE_DIR" not in os.environ
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "env"))
    assert runtime_cache_dir.use_user_cache_dir() == str(tmp_path / "env")
    assert not no_user_setting.exists()


def test_an_unwritable_cache_home_falls_back_to_a_temporary_dir(no_user_setting, monkeypatch, tmp_path):
    (tmp_path / "cache-home").write_text("a file, not a folder")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    expected = runtime_cache_dir.temp_cache_dir() / runtime_cache_dir.kernel_sources_fingerprint()
    assert runtime_cache_dir.use_user_cache_dir() == str(expected)
    assert expected.is_relative_to(tmp_path / "tmp") and expected.is_dir()


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the XDG rule is Linux's")
def test_xdg_cache_home_is_used_when_absolute(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert runtime_cache_dir.user_cache_root() == tmp_path
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")
    assert runtime_cache_dir.user_cache_root() == Path.home() / ".cache"


# Runs a component's operations in a fresh process, with float32 scores (a
# thinc model's) and float64 ones (the tests'), and prints the number of
# compiled signatures of every numba kernel of the structure modules named.
SIGNATURES = (
    """
import json, sys
import numpy as np
from numba.core.registry import CPUDispatcher
from spacy_depner.structures.chain import CHAIN, entity_marginals, kernels, structure as chain_structure
from spacy_depner.structures.nested import NESTED, charts, cyk, drivers, quadratic, semi_markov
from spacy_depner.structures.nested import layout as nested_layout
from spacy_depner.structures.nested._mentions import dense_spans

rng = np.random.default_rng(0)
offsets = np.array([0, 4, 7])
for dtype in (np.float32, np.float64):
    tags, transitions = rng.normal(size=(7, 9)).astype(dtype), rng.normal(size=(10, 10)).astype(dtype)
    layout = chain_structure.layout(offsets)
    marginals = CHAIN.marginals((tags, transitions), layout, scheme="BILOU")
    marginals.log_z, marginals.of(np.array([[0, 1, 0], [4, 4, 1]])), marginals.mentions(0.0)
    CHAIN.viterbi((tags, transitions), layout, scheme="BILOU")
    spans = dense_spans(offsets)
    scores = rng.normal(size=(spans.shape[0], 2)).astype(dtype)
    layout = nested_layout(spans, offsets)
    NESTED.marginals(scores, layout, space="quadratic").log_z, NESTED.viterbi(scores, layout, space="quadratic")

MODULES = (kernels, entity_marginals, charts, cyk, quadratic, semi_markov)
"""
    + COUNT_KERNELS
    + """
for space, kernels in drivers.DRIVERS.items():
    for kernel in kernels:
        for compiled in (kernel.scaled, kernel.log_space) if hasattr(kernel, "scaled") else (kernel,):
            counts[f"drivers.{space}.{compiled.__name__}"] = len(compiled.signatures)
print(json.dumps(counts))
"""
)


@pytest.mark.slow
def test_a_component_compiles_one_signature_of_its_own_kernels_only(tmp_path):
    """From an empty cache (a kernel loaded from the cache leaves its callees
    uncompiled), scores of either float type compile each kernel once (they
    are read as float64), and the quadratic nested space compiles none of the
    other spaces' passes, nor its log-space marginals while the scaled pass
    takes every document; only the two semirings of the mention axioms (a
    compile-time constant: max or log-sum) are two specialisations."""
    counts = signature_counts(SIGNATURES, tmp_path)
    semirings = {"charts._mention_axioms": 2}
    several = {name: n for name, n in counts.items() if n > semirings.get(name, 1)}
    assert not several, f"kernels compiled for several signatures: {several}"
    other_spaces = {
        name: n
        for name, n in counts.items()
        if n and (name.startswith(("cyk.", "semi_markov.")) or name.startswith(("drivers.cyk", "drivers.semi_markov")))
    }
    assert not other_spaces, f"the quadratic space compiled the passes of other spaces: {other_spaces}"
    used = [
        "kernels._marginals",
        "kernels._viterbi",
        "entity_marginals._entity_marginals",
        "quadratic._inside_quadratic",
    ]
    assert all(counts[name] == 1 for name in used + ["drivers.quadratic.scaled_marginals", "drivers.quadratic.viterbi"])
    # scores in the scaled pass's range: the log-space marginals are not compiled at all
    assert counts["drivers.quadratic.log_space_marginals"] == 0 and counts["quadratic._marginals_quadratic"] == 0


def test_every_module_with_kernels_is_in_the_fingerprint():
    """A module with @njit code outside KERNEL_SOURCES would not renew the cache folder when it changes."""
    covered = set(runtime_cache_dir.kernel_modules())
    compiled = {
        path
        for path in PACKAGE.rglob("*.py")
        if "@njit" in path.read_text(encoding="utf8") and path.parent.name != "numba_runtime"
    }
    assert compiled and compiled <= covered, sorted(str(p) for p in compiled - covered)


def test_the_folder_changes_with_a_kernel_module(monkeypatch, tmp_path):
    """Another state of the kernel sources (a release, an edit) compiles into another folder."""
    package = tmp_path / "package"
    (package / "structures").mkdir(parents=True)
    (package / "ml").mkdir()
    kernel = package / "structures" / "kernels.py"
    kernel.write_text("x = 1\n")
    (package / "ml" / "span_kernels.py").write_text("y = 2\n")
    monkeypatch.setattr(runtime_cache_dir, "PACKAGE", package)
    before = runtime_cache_dir.kernel_sources_fingerprint()
    assert runtime_cache_dir.kernel_sources_fingerprint() == before
    kernel.write_text("x = 10\n")
    assert runtime_cache_dir.kernel_sources_fingerprint() != before
