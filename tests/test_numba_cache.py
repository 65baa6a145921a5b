"""numba's cache of compiled code lies outside the package (``util.numba_cache``):
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

from spacy_depner.util import numba_cache

ROOT = Path(__file__).resolve().parents[1]
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
        expected = tmp_path / "xdg" / "spacy-depner" / "numba"
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
    monkeypatch.setattr(numba_cache, "user_cache_root", lambda: tmp_path / "cache-home")
    return tmp_path / "cache-home" / "spacy-depner" / "numba"


def test_sets_the_variable_and_the_config_of_an_imported_numba(no_user_setting):
    assert numba_cache.use_user_cache_dir() == str(no_user_setting)
    assert (
        os.environ["NUMBA_CACHE_DIR"] == numba.config.CACHE_DIR == str(no_user_setting)
    )  # worker processes inherit it
    assert no_user_setting.is_dir()


def test_does_not_import_numba(no_user_setting, monkeypatch):
    monkeypatch.delitem(sys.modules, "numba")
    assert numba_cache.use_user_cache_dir() == str(no_user_setting)
    assert "numba" not in sys.modules


def test_the_user_setting_wins(no_user_setting, monkeypatch, tmp_path):
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "config"))
    assert numba_cache.use_user_cache_dir() == str(tmp_path / "config") and "NUMBA_CACHE_DIR" not in os.environ
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "env"))
    assert numba_cache.use_user_cache_dir() == str(tmp_path / "env")
    assert not no_user_setting.exists()


def test_an_unwritable_cache_home_falls_back_to_a_temporary_dir(no_user_setting, monkeypatch, tmp_path):
    (tmp_path / "cache-home").write_text("a file, not a folder")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    assert numba_cache.use_user_cache_dir() == str(numba_cache.temp_cache_dir())
    assert numba_cache.temp_cache_dir().is_relative_to(tmp_path / "tmp") and numba_cache.temp_cache_dir().is_dir()


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="the XDG rule is Linux's")
def test_xdg_cache_home_is_used_when_absolute(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert numba_cache.user_cache_root() == tmp_path
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")
    assert numba_cache.user_cache_root() == Path.home() / ".cache"
