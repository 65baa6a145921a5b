"""The README's install steps, in order, leave a working package: ``pip install .``,
the first example (numba compiles and caches), then ``pip install -e .`` (the
editable install imports everywhere; no folder of cache files is left in
site-packages to shadow it), then ``pip uninstall`` (nothing left).

The virtual environment takes its dependencies from the running interpreter's
site-packages (a ``.pth`` line: no download, no ``.pth`` hook of that
environment, so its own install of spacy-depner stays out of sight); the
package installed is a copy of this checkout's, so each import shows which
copy it found."""

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest
from test_readme import runnable_blocks

ROOT = Path(__file__).resolve().parents[1]
PIP_INSTALL = ("-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index")


def run(python: Path, *args: str, cwd: Path, env: dict) -> str:
    """Run ``python args`` and return its stdout; fail the test with stderr if it fails."""
    done = subprocess.run([str(python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{args[:4]}: {done.stderr[-3000:]}"
    return done.stdout.strip()


def make_venv(folder: Path, env: dict) -> tuple[Path, Path]:
    """A virtual environment that sees the running interpreter's packages; its python and site-packages."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(folder)], check=True, timeout=120
    )
    python = folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=folder, env=env))
    (purelib / "outer_packages.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf8")
    return python, purelib


@pytest.mark.slow
def test_readme_install_steps_leave_a_working_package(tmp_path):
    source = tmp_path / "checkout"  # only what the build reads
    shutil.copytree(ROOT / "spacy_depner", source / "spacy_depner", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    empty = tmp_path / "empty"
    empty.mkdir()
    # numba's default location, as a user has it: no NUMBA_CACHE_DIR, the user cache folder in tmp_path
    env = {name: value for name, value in os.environ.items() if name not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "user-cache")
    python, purelib = make_venv(tmp_path / "venv", env)
    installed = purelib / "spacy_depner"
    where = "\nimport spacy_depner; print(spacy_depner.__file__)"  # the last line printed: which copy was imported

    run(python, *PIP_INSTALL, str(source), cwd=empty, env=env)
    printed = run(python, "-c", runnable_blocks()[0] + where, cwd=empty, env=env)
    assert Path(printed.splitlines()[-1]) == installed / "__init__.py"
    assert list((tmp_path / "user-cache" / "spacy-depner" / "numba").rglob("*.nbi"))
    assert not list(installed.rglob("*.nb[ic]"))  # numba's cache is not in the installed package

    run(python, *PIP_INSTALL, "-e", str(source), cwd=empty, env=env)
    assert not installed.exists()
    printed = run(python, "-c", "import spacy_depner.structures.trees.forest" + where, cwd=empty, env=env)
    assert Path(printed) == source / "spacy_depner" / "__init__.py"

    run(python, "-m", "pip", "uninstall", "--quiet", "--yes", "spacy-depner", cwd=empty, env=env)
    assert not installed.exists() and not list(purelib.glob("*spacy_depner*"))
