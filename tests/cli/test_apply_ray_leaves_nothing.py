"""``apply-ray`` that fails before its first shard (Ray not installed, or
Ray failing to start) leaves nothing behind: no OUTPUT, no OUTPUT.partial/,
no manifest, as guides/bad_input.md promises. Runs without Ray: its
absence is simulated, and so is a Ray that cannot start."""

import sys
import types

import pytest

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run
from spacy_depner.inference import ray_data


def leftovers(folder, corpus):
    return sorted(p.name for p in folder.iterdir() if p != corpus)


def test_without_ray_the_error_says_how_to_install_it_and_nothing_is_written(
    monkeypatch, capsys, pipeline, corpus, tmp_path
):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    status = run(app, ["apply-ray", str(pipeline), str(corpus), str(tmp_path / "out.jsonl")], "python -m spacy_depner")
    assert status == 1
    assert 'pip install ".[ray]"' in capsys.readouterr().err
    assert leftovers(tmp_path, corpus) == []


def test_a_ray_that_cannot_start_leaves_nothing(monkeypatch, pipeline, corpus, tmp_path):
    def fail(**_):
        raise ConnectionError("no Ray cluster at ray://nowhere:10001")

    fake = types.SimpleNamespace(is_initialized=lambda: False, init=fail, shutdown=lambda: None)
    monkeypatch.setattr(ray_data, "import_ray", lambda: fake)
    with pytest.raises(ConnectionError, match="no Ray cluster"):
        ray_data.ray_annotate(pipeline, corpus, tmp_path / "out.jsonl", progress=False)
    assert leftovers(tmp_path, corpus) == []
