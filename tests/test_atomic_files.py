"""``spacy_depner.util.atomic_files``: outputs that appear whole or not at all
(files, folders, folder contents), also when the writing process is killed,
and the partial outputs and manifests of resumable runs."""

import json
import os
import random
import signal
import subprocess
import sys

import pytest

from spacy_depner.util.atomic_files import (
    atomic_folder_contents,
    atomic_path,
    check_manifest,
    complete_lines,
    finish_partial,
    manifest_path,
    partial_path,
    path_fingerprint,
    remove_stale_temporaries,
)


def test_a_file_replaces_the_old_one_whole(tmp_path):
    final = tmp_path / "deep" / "out.spacy"
    with atomic_path(final) as temporary:
        assert temporary.parent == final.parent and temporary.suffix == ".spacy" and not temporary.exists()
        temporary.write_text("first")
        assert not final.exists()
    assert final.read_text() == "first"
    with atomic_path(final) as temporary:
        temporary.write_text("second")
        assert final.read_text() == "first"
    assert final.read_text() == "second" and os.listdir(final.parent) == ["out.spacy"]


def test_a_failure_inside_the_block_leaves_the_previous_file_and_no_temporary(tmp_path):
    final = tmp_path / "out.json"
    final.write_text("previous")
    with pytest.raises(RuntimeError, match="midway"):
        with atomic_path(final) as temporary:
            temporary.write_text("half")
            raise RuntimeError("midway")
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(final) as temporary:
            temporary.mkdir()
            (temporary / "part").write_text("half")
            raise KeyboardInterrupt
    assert final.read_text() == "previous" and os.listdir(tmp_path) == ["out.json"]


def test_a_folder_replaces_the_old_folder_whole(tmp_path):
    final = tmp_path / "pipeline"
    final.mkdir()
    (final / "stale").write_text("old")
    with atomic_path(final) as temporary:
        temporary.mkdir()
        (temporary / "config.cfg").write_text("new")
        assert (final / "stale").exists()
    assert os.listdir(final) == ["config.cfg"] and os.listdir(tmp_path) == ["pipeline"]
    with pytest.raises(ValueError, match="broken"):
        with atomic_path(final) as temporary:
            temporary.mkdir()
            raise ValueError("broken")
    assert os.listdir(final) == ["config.cfg"] and os.listdir(tmp_path) == ["pipeline"]


def test_what_cannot_be_installed_is_refused_and_removed(tmp_path):
    final = tmp_path / "out.txt"
    final.write_text("kept")
    with pytest.raises(ValueError, match="out.txt exists"):
        with atomic_path(final, overwrite=False):
            pass
    with pytest.raises(FileNotFoundError, match="Nothing was written"):
        with atomic_path(final):
            pass
    with pytest.raises(ValueError, match="out.txt is a file, and the new output is a folder"):
        with atomic_path(final) as temporary:
            temporary.mkdir()
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(ValueError, match="folder is a folder, and the new output is a file"):
        with atomic_path(folder) as temporary:
            temporary.write_text("x")
    assert final.read_text() == "kept" and sorted(os.listdir(tmp_path)) == ["folder", "out.txt"]


def test_folder_contents_replace_their_namesakes_and_keep_the_others(tmp_path):
    folder = tmp_path / "genia"
    folder.mkdir()
    (folder / "README").write_text("mine")
    (folder / "train.jsonl").write_text("old")
    with atomic_folder_contents(folder) as temporary:
        (temporary / "train.jsonl").write_text("new train")
        (temporary / "dev.jsonl").write_text("new dev")
    assert {p.name: p.read_text() for p in folder.iterdir()} == {
        "README": "mine",
        "train.jsonl": "new train",
        "dev.jsonl": "new dev",
    }
    with pytest.raises(RuntimeError):
        with atomic_folder_contents(folder) as temporary:
            (temporary / "train.jsonl").write_text("half")
            raise RuntimeError
    assert sorted(os.listdir(folder)) == ["README", "dev.jsonl", "train.jsonl"]
    assert (folder / "train.jsonl").read_text() == "new train" and os.listdir(tmp_path) == ["genia"]
    with pytest.raises(RuntimeError):
        with atomic_folder_contents(tmp_path / "new") as temporary:
            (temporary / "train.jsonl").write_text("half")
            raise RuntimeError
    assert os.listdir(tmp_path) == ["genia"]


KILLED_WRITER = """
import os, signal, sys
from spacy_depner.util.atomic_files import atomic_path
with atomic_path(sys.argv[1]) as temporary:
    temporary.write_text("half of the new content")
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_writer_leaves_the_old_file_and_a_temporary_that_can_be_cleared(tmp_path):
    final = tmp_path / "report.md"
    final.write_text("old report")
    (tmp_path / "report.md.notes").write_text("not a temporary")
    done = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(final)])
    assert done.returncode == -signal.SIGKILL
    assert final.read_text() == "old report"
    assert len(os.listdir(tmp_path)) == 3  # the stale temporary
    remove_stale_temporaries(tmp_path, "report")
    assert sorted(os.listdir(tmp_path)) == ["report.md", "report.md.notes"]


def test_complete_lines_cuts_a_torn_last_line_at_any_chunk_boundary(tmp_path):
    rng = random.Random(0)
    path = tmp_path / "lines.jsonl"
    for _ in range(200):
        data = bytes(rng.choice(b"ab\n") for _ in range(rng.randrange(0, 30)))
        path.write_bytes(data)
        lines = complete_lines(path, chunk_size=rng.randrange(1, 8))
        kept = data[: data.rfind(b"\n") + 1]  # "" when there is no newline
        assert path.read_bytes() == kept and lines == len(kept.splitlines())


def test_a_partial_is_resumed_only_with_the_same_settings(tmp_path):
    final = tmp_path / "out.jsonl"
    settings = {"format": "jsonl", "input": {"size": 10}}
    assert check_manifest(final, settings, restart=False) is False
    assert json.loads(manifest_path(final).read_text()) == settings and not partial_path(final).exists()
    partial_path(final).write_text("1\n2\n")
    assert check_manifest(final, settings, restart=False) is True
    other = {"format": "jsonl", "input": {"size": 11}}
    with pytest.raises(
        ValueError,
        match=r"out.jsonl.partial was left by a run with other input: rerun with the "
        r"same arguments.*or delete .*out.jsonl.partial and .*--force",
    ):
        check_manifest(final, other, restart=False)
    assert partial_path(final).read_text() == "1\n2\n"
    manifest_path(final).unlink()
    with pytest.raises(ValueError, match="left by a run without .*out.jsonl.partial.json"):
        check_manifest(final, settings, restart=False)
    assert check_manifest(final, other, restart=True) is False and not partial_path(final).exists()
    assert json.loads(manifest_path(final).read_text()) == other
    partial_path(final).write_text("done\n")
    finish_partial(final)
    assert final.read_text() == "done\n" and os.listdir(tmp_path) == ["out.jsonl"]


def test_fingerprints_change_with_the_content(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "weights").write_bytes(b"1234")
    before = path_fingerprint(tmp_path / "model")
    assert before["files"] == 1 and before["size"] == 4
    (tmp_path / "model" / "weights").write_bytes(b"12345")
    assert path_fingerprint(tmp_path / "model") != before
    (tmp_path / "corpus.txt").write_text("a\n")
    first = path_fingerprint(tmp_path / "corpus.txt")
    os.utime(tmp_path / "corpus.txt", ns=(first["mtime_ns"] + 10**9,) * 2)
    assert path_fingerprint(tmp_path / "corpus.txt") != first


def test_a_missing_parent_folder_is_made(tmp_path):
    """The writers of every command (``atomic_path``, experiments' ``write_json``)
    make the output's folders, so that ``--output metrics/x/y.json`` works in a fresh clone."""
    from experiments.kit.outputs import write_json

    final = tmp_path / "metrics" / "study" / "own.json"
    with atomic_path(final) as temporary:
        temporary.write_text("{}")
    assert final.read_text() == "{}"
    write_json(tmp_path / "other" / "nested" / "x.json", {"a": 1})
    assert json.loads((tmp_path / "other" / "nested" / "x.json").read_text()) == {"a": 1}
