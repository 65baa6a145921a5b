"""``python -m spacy_depner pretrain-text``: the sentences of the fixtures of
tests/data written one JSON line each (words and text written by hand from
the fixture files), read back by spacy.JsonlCorpus.v1 as `spacy pretrain`
reads them, and the errors on bad input."""

import json
from pathlib import Path

import spacy
from spacy.tokens import DocBin
from spacy.util import registry

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run

DATA = Path(__file__).parents[1] / "data"
CONLLU, IOB2, GENIA = DATA / "tiny.conllu", DATA / "tiny.iob2", DATA / "nested_genia.jsonl"

# tests/data/tiny.conllu: the syntactic words (don't -> do n't) and the text its SpaceAfter gives
TINY_LINES = [
    {"text": "John Smith visited New York.", "tokens": ["John", "Smith", "visited", "New", "York", "."]},
    {"text": "I don't like Acme Corp in Paris", "tokens": ["I", "do", "n't", "like", "Acme", "Corp", "in", "Paris"]},
    {"text": "Visit Lake Tahoe", "tokens": ["Visit", "Lake", "Tahoe"]},
]


def pretrain_text(capsys, *args) -> dict:
    """Run ``pretrain-text ARGS``; the JSON it printed."""
    assert run(app, ["pretrain-text", *map(str, args)], "python -m spacy_depner") == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def failure(capsys, *args) -> str:
    """Run ``pretrain-text ARGS``, which must fail; its one-line error."""
    assert run(app, ["pretrain-text", *map(str, args)], "python -m spacy_depner") == 1
    return capsys.readouterr().err


def read_lines(path: Path):
    return [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]


def test_conllu_sentences_written_one_line_each(capsys, tmp_path):
    output = tmp_path / "text.jsonl"
    summary = pretrain_text(capsys, CONLLU, output)
    assert read_lines(output) == TINY_LINES
    assert (summary["sentences"], summary["words"]) == (3, 17)
    assert [p.name for p in tmp_path.iterdir()] == ["text.jsonl"]  # no temporary left


def test_genia_and_docbin_inputs(capsys, tmp_path):
    pretrain_text(capsys, GENIA, tmp_path / "genia.jsonl")
    genia = read_lines(tmp_path / "genia.jsonl")
    first = json.loads(GENIA.read_text(encoding="utf8").splitlines()[0])["tokens"]
    assert genia[0] == {"text": " ".join(first), "tokens": first}  # GENIA gives no spacing: one space
    docbin = tmp_path / "tiny.spacy"
    assert (
        run(
            app,
            ["convert", str(CONLLU), str(docbin), "-c", "conllu-iob2", "--iob2", str(IOB2)],
            "python -m spacy_depner",
        )
        == 0
    )
    capsys.readouterr()
    pretrain_text(capsys, docbin, tmp_path / "docbin.jsonl")
    assert read_lines(tmp_path / "docbin.jsonl") == TINY_LINES
    # one DocBin Doc per document: its sentences (from the trees) are still one line each
    documents = tmp_path / "documents.spacy"
    assert (
        run(
            app,
            ["convert", str(CONLLU), str(documents), "-c", "conllu-iob2", "--iob2", str(IOB2), "--documents"],
            "python -m spacy_depner",
        )
        == 0
    )
    capsys.readouterr()
    pretrain_text(capsys, documents, tmp_path / "documents.jsonl", "--format", "docbin")
    assert read_lines(tmp_path / "documents.jsonl") == TINY_LINES


def test_spacy_jsonl_corpus_reads_the_text(capsys, tmp_path):
    output = tmp_path / "text.jsonl"
    pretrain_text(capsys, CONLLU, output)
    corpus = registry.readers.get("spacy.JsonlCorpus.v1")(path=output, min_length=0, max_length=0, limit=0)
    docs = [eg.reference for eg in corpus(spacy.blank("en"))]
    assert [doc.text for doc in docs] == [line["text"] for line in TINY_LINES]
    assert [t.text for t in docs[0]] == TINY_LINES[0]["tokens"]  # here the tokenizer gives the same words


def test_bad_input_is_a_clear_error(capsys, tmp_path):
    output = tmp_path / "text.jsonl"
    assert "not found: " + str(tmp_path / "missing.conllu") in failure(capsys, tmp_path / "missing.conllu", output)
    assert "must end in .jsonl" in failure(capsys, CONLLU, tmp_path / "text.txt")
    assert "--format" in failure(capsys, CONLLU, output, "--format", "xml")
    assert "cannot tell its format" in failure(capsys, IOB2, output)
    assert "not a DocBin file" in failure(capsys, CONLLU, output, "--format", "docbin")
    empty = tmp_path / "empty.spacy"
    DocBin().to_disk(empty)
    error = failure(capsys, empty, output)
    assert str(empty) in error and "holds no sentence" in error
    assert not output.exists() and [p.name for p in tmp_path.iterdir()] == ["empty.spacy"]


def test_a_failed_run_keeps_the_previous_file(capsys, tmp_path):
    output = tmp_path / "text.jsonl"
    pretrain_text(capsys, CONLLU, output)
    broken = tmp_path / "broken.conllu"
    broken.write_text(CONLLU.read_text(encoding="utf8") + "\n1\tonly\tthree\n", encoding="utf8")
    assert f"{broken}:" in failure(capsys, broken, output)
    assert read_lines(output) == TINY_LINES
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.conllu", "text.jsonl"]
