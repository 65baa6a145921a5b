"""The command line's user errors: one line on stderr and exit status 1;
bugs keep their traceback; a pipeline that cannot be scored is refused with
what it has."""

import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import typer

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run

DATA = Path(__file__).parents[1] / "data"


def error_line(capsys, *args) -> str:
    """Run the app on ``args``, check the status is 1 and stderr one line; that line."""
    assert run(app, list(args), "python -m spacy_depner") == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    return lines[0]


def test_missing_argument_names_it(capsys):
    assert "'PIPELINE'" in error_line(capsys, "evaluate")


def test_bad_option_value_names_the_option(capsys):
    line = error_line(capsys, "find-penalty", "model", "x.jsonl", "out", "--step", "abc")
    assert "--step" in line and "--help" in line


def test_missing_file_names_the_path(capsys, tmp_path):
    missing = tmp_path / "nowhere.conllu"
    assert str(missing) in error_line(capsys, "coverage", str(missing))


def test_directory_instead_of_file(capsys, tmp_path):
    line = error_line(capsys, "coverage", str(tmp_path / "folder.conllu"))
    assert str(tmp_path) in line


def test_missing_pipeline(capsys, tmp_path):
    assert str(tmp_path / "none") in error_line(capsys, "evaluate", str(tmp_path / "none"), "x.conllu", "--iob2", "y")


def test_pipeline_without_entity_component_is_refused(capsys, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.to_disk(tmp_path / "pipeline")
    line = error_line(
        capsys, "evaluate", str(tmp_path / "pipeline"), str(DATA / "tiny.conllu"), "--iob2", str(DATA / "tiny.iob2")
    )
    assert "no component that writes doc.ents" in line and "['sentencizer']" in line


@pytest.fixture
def ruler_pipeline(tmp_path) -> Path:
    """A pipeline that writes doc.spans["ruler"] (spaCy's span ruler) and nothing else."""
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("span_ruler")
    ruler.add_patterns([{"label": "protein", "pattern": "no such word"}])
    nlp.to_disk(tmp_path / "ruler")
    return tmp_path / "ruler"


def test_wrong_spans_key_is_refused_naming_the_keys(capsys, ruler_pipeline):
    line = error_line(
        capsys, "evaluate-nested", str(ruler_pipeline), str(DATA / "nested_genia.jsonl"), "--spans-key", "wrongkey"
    )
    assert "'wrongkey'" in line and "['ruler']" in line


@pytest.mark.slow
def test_nothing_predicted_warns(ruler_pipeline):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy_depner",
            "evaluate-nested",
            str(ruler_pipeline),
            str(DATA / "nested_genia.jsonl"),
            "--spans-key",
            "ruler",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "predicted no span" in warnings[0], done.stderr


@pytest.mark.slow
def test_entry_point_prints_one_line_without_traceback():
    done = subprocess.run(
        [sys.executable, "-m", "spacy_depner", "coverage", "/nonexistent/gum.conllu"], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and "/nonexistent/gum.conllu" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_bug_keeps_its_traceback():
    broken = typer.Typer()

    @broken.command()
    def fail() -> None:
        [][1]

    with pytest.raises(IndexError):
        run(broken, [])


def test_data_with_nothing_to_score_against_names_the_cause(capsys, pipeline, tmp_path):
    """An empty DocBin (evaluate, find-threshold, calibrate) and JSON lines
    of plain text (evaluate, find-threshold) are one line saying there is
    no gold annotation, not P/R/F 0, a missing --spans-key or GENIA."""
    from spacy.tokens import DocBin

    empty = tmp_path / "empty.spacy"
    DocBin().to_disk(empty)
    for command, *output in (["evaluate"], ["find-threshold"], ["calibrate", str(tmp_path / "calibrated")]):
        line = error_line(capsys, command, str(pipeline), str(empty), *output)
        assert "holds no Doc" in line and str(empty) in line and "--spans-key" not in line
    plain = tmp_path / "plain.jsonl"
    plain.write_text('{"text": "John lives in Paris."}\n{"text": "Acme hired Mary."}\n', encoding="utf8")
    for command in ("evaluate", "find-threshold"):
        line = error_line(capsys, command, str(pipeline), str(plain))
        assert "no annotations" in line and "is GENIA" not in line and str(plain) in line
    assert not (tmp_path / "calibrated").exists()
