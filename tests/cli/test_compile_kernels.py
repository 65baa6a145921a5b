"""``python -m spacy_depner compile`` fills numba's cache ahead of the first
pipeline: from an empty NUMBA_CACHE_DIR it writes the index files of the kernels
it compiles; it covers every structure (each space of nested_ner); the README's
Install section tells a user to run it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_depner.cli.compile_kernels import TARGETS, compile_kernels
from spacy_depner.pipeline.nested_ner import SPACES

ROOT = Path(__file__).resolve().parents[2]


def test_every_structure_is_compiled():
    factories = {factory for factory, _ in TARGETS.values()}
    assert factories >= {"chain_ner", "dgm_ner", "nested_ner", "hypergraph_ner"}
    spaces = {config["space"] for factory, config in TARGETS.values() if factory == "nested_ner"}
    assert spaces == set(SPACES)


def test_an_unknown_structure_is_a_user_error():
    with pytest.raises(ValueError, match="--only spancat: not a structure this command compiles; one of chain_ner"):
        compile_kernels(only=["spancat"])


def test_the_readme_install_section_names_the_command():
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    install = readme.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "python -m spacy_depner compile" in install


@pytest.mark.slow
def test_a_fresh_cache_gets_the_index_files_of_the_kernels(tmp_path):
    cache = tmp_path / "numba"
    done = subprocess.run(
        [sys.executable, "-m", "spacy_depner", "compile", "--only", "chain_ner"],
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    indexes = [path.name for path in cache.rglob("*.nbi")]
    assert any(name.startswith("kernels.") for name in indexes), indexes  # structures/chain/kernels.py
    assert all(list(cache.rglob(name.replace(".nbi", ".*.nbc"))) for name in indexes)
    assert f"into numba's cache {cache}" in done.stdout
