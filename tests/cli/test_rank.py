"""``rank``: the documents of a corpus ordered by the uncertainty of a tiny
trained dgm_ner, as task records; --top; a run that failed part-way is
continued by the same command and writes what an uninterrupted run writes;
an empty input warns; bad arguments are clear errors."""

import json

import pytest
import typer
from typer.testing import CliRunner

from spacy_depner.cli.rank import rank
from spacy_depner.inference import ranking
from spacy_depner.pipeline.uncertainty import MEASURES, doc_uncertainties


def cli(*args):
    app = typer.Typer()
    app.command("rank")(rank)
    app.command("other")(lambda: None)
    return CliRunner().invoke(app, ["rank", *[str(arg) for arg in args]])


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]


@pytest.mark.parametrize("measure", MEASURES)
def test_records_are_the_documents_most_uncertain_first(pipeline, nlp, records, corpus, tmp_path, measure):
    done = cli(pipeline, corpus, tmp_path / "ranked.jsonl", "--measure", measure, "--batch-size", 5, "--no-progress")
    assert done.exit_code == 0, done.output
    ranked = lines(tmp_path / "ranked.jsonl")
    assert len(ranked) == len(records) == json.loads(done.stdout)["tasks_written"]
    scores = [record["score"] for record in ranked]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    docs = {doc.text: doc for doc in nlp.pipe(text for text, _ in records)}
    by_text = {
        doc.text: u for doc, u in zip(docs.values(), doc_uncertainties(nlp.get_pipe("dgm_ner"), list(docs.values())))
    }
    for record in ranked:
        assert record["score"] == pytest.approx(getattr(by_text[record["text"]], measure), abs=1e-5)
        assert record["meta"][measure] == record["score"] and "id" in record["meta"]
        assert [t["text"] for t in record["tokens"]] == [t.text for t in docs[record["text"]]]
        ents = {(e.start, e.end - 1, e.label_) for e in docs[record["text"]].ents}
        assert {(s["token_start"], s["token_end"], s["label"]) for s in record["spans"]} == ents
        for span in record["spans"]:
            assert record["text"][span["start"] : span["end"]] == span["text"] and 0 < span["score"] <= 1


def test_top_keeps_the_most_uncertain(pipeline, corpus, tmp_path):
    assert cli(pipeline, corpus, tmp_path / "all.jsonl", "--no-progress").exit_code == 0
    assert cli(pipeline, corpus, tmp_path / "top.jsonl", "--top", 4, "--no-progress").exit_code == 0
    assert lines(tmp_path / "top.jsonl") == lines(tmp_path / "all.jsonl")[:4]


def test_a_failed_run_is_continued_by_the_same_command(pipeline, corpus, tmp_path, monkeypatch):
    assert cli(pipeline, corpus, tmp_path / "whole.jsonl", "--batch-size", 5, "--no-progress").exit_code == 0
    calls = []

    def failing(pipe, docs):
        calls.append(len(docs))
        if len(calls) == 3:
            raise ValueError("stopped")
        return doc_uncertainties(pipe, docs)

    monkeypatch.setattr(ranking, "doc_uncertainties", failing)
    options = ["--batch-size", 5, "--shard-size", 5, "--no-progress"]
    failed = cli(pipeline, corpus, tmp_path / "ranked.jsonl", *options)
    assert failed.exit_code != 0 and not (tmp_path / "ranked.jsonl").exists()
    monkeypatch.setattr(ranking, "doc_uncertainties", doc_uncertainties)
    resumed = cli(pipeline, corpus, tmp_path / "ranked.jsonl", *options)
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["docs_kept"] == 9  # the two shards of 5 lines before, one of them blank
    assert (tmp_path / "ranked.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    assert not list(tmp_path.glob("ranked.jsonl.partial*"))


def test_two_processes_rank_as_one(pipeline, corpus, tmp_path):
    assert cli(pipeline, corpus, tmp_path / "one.jsonl", "--no-progress").exit_code == 0
    done = cli(pipeline, corpus, tmp_path / "two.jsonl", "--no-progress", "--n-process", 2, "--shard-size", 4)
    assert done.exit_code == 0, done.output
    assert (tmp_path / "two.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()


def test_a_run_that_failed_before_writing_leaves_nothing(pipeline, corpus, tmp_path, monkeypatch):
    def failing(pipe, docs):
        raise ValueError("stopped")

    monkeypatch.setattr(ranking, "doc_uncertainties", failing)
    assert cli(pipeline, corpus, tmp_path / "ranked.jsonl", "--no-progress").exit_code != 0
    assert not list(tmp_path.glob("ranked.jsonl*"))


def test_an_empty_input_warns(pipeline, tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.warns(UserWarning, match="no document"):
        done = cli(pipeline, tmp_path / "empty.jsonl", tmp_path / "out.jsonl", "--no-progress")
    assert done.exit_code == 0 and (tmp_path / "out.jsonl").read_text() == ""


def test_bad_arguments_are_clear_errors(pipeline, corpus, tmp_path):
    done = cli(pipeline, corpus, tmp_path / "out.jsonl", "--measure", "margin")
    assert isinstance(done.exception, ValueError) and "expected_errors" in str(done.exception)
    done = cli(pipeline, corpus, tmp_path / "out.jsonl", "--component", "ner")
    assert isinstance(done.exception, ValueError) and "dgm_ner" in str(done.exception)
    done = cli(pipeline, corpus, tmp_path / "shards")
    assert isinstance(done.exception, ValueError) and ".jsonl" in str(done.exception)
