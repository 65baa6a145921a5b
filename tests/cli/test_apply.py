"""``apply``: a tiny parser + dgm_ner pipeline streamed over a corpus, the
records checked against the pipeline's own Docs, the same bytes for any
number of processes, DocBin shards that spaCy's Corpus reads back, and the
errors of bad input."""

import json
from pathlib import Path

import numpy as np
import pytest
import spacy
import typer
from spacy.tokens import Doc, DocBin, SpanGroup
from spacy.training import Corpus
from typer.testing import CliRunner

from spacy_depner.cli.apply import apply, apply_ray
from spacy_depner.inference import annotate_corpus, doc_record, read_input


def cli(*args: str):
    """Run a command as ``python -m spacy_depner`` registers it (``apply``, ``apply-ray``)."""
    app = typer.Typer()
    app.command("apply")(apply)
    app.command("apply-ray")(apply_ray)
    return CliRunner().invoke(app, [str(arg) for arg in args])


def read_jsonl(path: Path):
    """The records of a JSONL file, split by str.splitlines: each must be one line for any reader."""
    return [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]


def test_records_hold_the_pipelines_annotations(pipeline, nlp, records, corpus, tmp_path):
    done = cli("apply", pipeline, corpus, tmp_path / "out.jsonl", "--batch-size", 4, "--no-progress")
    assert done.exit_code == 0, done.output
    summary = json.loads(done.stdout)
    output = read_jsonl(tmp_path / "out.jsonl")
    assert summary["docs"] == len(output) == len(records)
    docs = list(nlp.pipe(text for text, _ in records))
    assert summary["words"] == sum(len(doc) for doc in docs) and summary["words_per_second"] > 0
    assert any(len(doc.ents) for doc in docs) and any(len(e) > 1 for doc in docs for e in doc.ents)
    for record, (text, meta), doc in zip(output, records, docs):
        assert record["text"] == text and record["meta"] == meta
        expected = [(e.start, e.end, e.label_) for e in doc.ents]
        assert [(e["start"], e["end"], e["label"]) for e in record["ents"]] == expected
        assert all(text[e["start_char"] : e["end_char"]] == e["text"] for e in record["ents"])
        assert set(record["spans"]) == set(doc.spans) == {"dgm_ner"}
        scored = record["spans"]["dgm_ner"]
        assert [(s["start"], s["end"], s["label"]) for s in scored] == expected
        # each score reads back as the very float32 the component wrote
        assert [np.float32(s["score"]) for s in scored] == list(doc.spans["dgm_ner"].attrs["scores"])
        assert all(0 < s["score"] <= 1 for s in scored)


@pytest.mark.parametrize("suffix", [".jsonl", ".spacy", ""])
def test_same_bytes_for_any_number_of_processes_batch_size_and_shard_size(pipeline, corpus, tmp_path, suffix):
    """JSONL records, one DocBin, or DocBin shards (the same for any shard
    size but that one): the bytes of one process for two (each on shards of
    its own), any batch size and, but for shards, any shard size."""
    runs = {"one": (1, 4, 1000), "two": (2, 4, 5), "three": (3, 1000, 7), "two_big": (2, 3, 1000)}
    if suffix == "":
        runs = {"one": (1, 4, 5), "two": (2, 4, 5), "three": (3, 1000, 5)}
    for name, (n_process, batch_size, shard_size) in runs.items():
        options = ["--n-process", n_process, "--batch-size", batch_size, "--shard-size", shard_size]
        done = cli("apply", pipeline, corpus, tmp_path / f"{name}{suffix}", *options, "--no-progress")
        assert done.exit_code == 0, done.output
        assert json.loads(done.output)["docs"] == 37
    one = tmp_path / f"one{suffix}"
    for name in runs:
        if suffix:
            assert (tmp_path / f"{name}{suffix}").read_bytes() == one.read_bytes()
        else:
            names = sorted(p.name for p in (tmp_path / name).iterdir())
            assert names == [f"shard-{i:06d}.spacy" for i in range(8)]
            assert all((tmp_path / name / n).read_bytes() == (one / n).read_bytes() for n in names)
    if suffix == ".jsonl":
        assert one.read_bytes().count(b"\n") == 37


def test_spacy_output_is_one_docbin_as_spacy_apply_writes(pipeline, nlp, records, corpus, tmp_path):
    """OUTPUT.spacy: one DocBin of every Doc in input order (empty ones too,
    as spacy apply keeps them), the entities of the JSONL records."""
    done = cli("apply", pipeline, corpus, tmp_path / "out.spacy", "--shard-size", 10, "--no-progress")
    assert done.exit_code == 0, done.output
    assert not (tmp_path / "out.spacy.partial").exists() and not (tmp_path / "out.spacy.partial.json").exists()
    docs = list(DocBin().from_disk(tmp_path / "out.spacy").get_docs(nlp.vocab))
    assert [doc.text for doc in docs] == [text for text, _ in records]
    annotate_corpus(nlp, corpus, tmp_path / "direct.jsonl", progress=False)
    direct = read_jsonl(tmp_path / "direct.jsonl")
    assert [[(e.start, e.end, e.label_) for e in doc.ents] for doc in docs] == [
        [(e["start"], e["end"], e["label"]) for e in record["ents"]] for record in direct
    ]
    assert any(record["ents"] for record in direct)
    done = cli("apply", pipeline, corpus, tmp_path / "out.spacy", "--no-progress")
    assert done.exit_code != 0 and "--force" in str(done.exception or done.output)


def test_text_input_is_one_document_per_line(nlp, tmp_path):
    # a byte order mark, CRLF line ends, a Unicode line separator inside a line
    text = "\ufeffJohn Smith visited Paris\r\n\r\nZoë Müller lives in Paris\u2028again\n"
    (tmp_path / "corpus.txt").write_bytes(text.encode("utf8"))
    annotate_corpus(nlp, tmp_path / "corpus.txt", tmp_path / "out.jsonl", progress=False)
    output = read_jsonl(tmp_path / "out.jsonl")
    assert [(r["text"], r["meta"]) for r in output] == [
        ("John Smith visited Paris", {}),
        ("", {}),
        ("Zoë Müller lives in Paris\u2028again", {}),
    ]
    assert output[1]["ents"] == [] and output[1]["spans"] == {"dgm_ner": []}


def test_docbin_shards_are_read_by_spacy_corpus(nlp, records, corpus, tmp_path):
    summary = annotate_corpus(nlp, corpus, tmp_path / "shards", shard_size=10, batch_size=4, progress=False)
    assert summary["docs"] == 37
    assert sorted(p.name for p in (tmp_path / "shards").iterdir()) == [f"shard-00000{i}.spacy" for i in range(4)]
    docs = [example.reference for example in Corpus(tmp_path / "shards")(nlp)]
    non_empty = [i for i, (text, _) in enumerate(records) if text]  # Corpus skips empty Docs
    assert [doc.text for doc in docs] == [records[i][0] for i in non_empty]
    # DocBin's msgpack gives lists back as tuples: the same JSON
    assert [json.loads(json.dumps(doc.user_data["meta"])) for doc in docs] == [records[i][1] for i in non_empty]
    annotate_corpus(nlp, corpus, tmp_path / "direct.jsonl", progress=False)
    direct = read_jsonl(tmp_path / "direct.jsonl")
    assert [[(e.start, e.end, e.label_) for e in doc.ents] for doc in docs] == [
        [(e["start"], e["end"], e["label"]) for e in direct[i]["ents"]] for i in non_empty
    ]


def test_docbin_input_gives_the_records_of_the_same_text(nlp, records, corpus, tmp_path):
    """Unannotated Docs in two DocBin files of a directory (read in name order,
    meta from user_data) annotate as the JSONL corpus of their text does."""
    (tmp_path / "docs").mkdir()
    for name, part in (("b.spacy", records[20:]), ("a.spacy", records[:20])):
        docs = DocBin(store_user_data=True)
        for text, meta in part:
            doc = nlp.make_doc(text)
            doc.user_data["meta"] = meta
            docs.add(doc)
        docs.to_disk(tmp_path / "docs" / name)
    annotate_corpus(nlp, corpus, tmp_path / "direct.jsonl", progress=False)
    annotate_corpus(nlp, tmp_path / "docs", tmp_path / "from_dir.jsonl", n_process=2, batch_size=8, progress=False)
    assert (tmp_path / "from_dir.jsonl").read_bytes() == (tmp_path / "direct.jsonl").read_bytes()
    annotate_corpus(nlp, tmp_path / "docs" / "b.spacy", tmp_path / "from_file.jsonl", progress=False)
    assert read_jsonl(tmp_path / "from_file.jsonl") == read_jsonl(tmp_path / "direct.jsonl")[20:]


def test_records_are_read_and_written_as_they_come(nlp, records, tmp_path):
    lines = [json.dumps({"text": text}) for text, _ in records[:9]]
    (tmp_path / "late_error.jsonl").write_text("\n".join(lines + ["{bad"] + lines) + "\n", encoding="utf8")
    stream = read_input(tmp_path / "late_error.jsonl", nlp.vocab)
    assert [next(stream)[0] for _ in range(9)] == [text for text, _ in records[:9]]
    with pytest.raises(ValueError, match="late_error.jsonl:10: not valid JSON"):
        next(stream)
    with pytest.raises(ValueError, match="late_error.jsonl:10"):
        options = dict(batch_size=4, shard_size=4, progress=False)
        annotate_corpus(nlp, tmp_path / "late_error.jsonl", tmp_path / "out.jsonl", **options)
    # the shards before the bad line's were written before it was read, to the partial output
    shards = sorted((tmp_path / "out.jsonl.partial").iterdir())
    assert [path.name for path in shards] == ["shard-000000.jsonl", "shard-000001.jsonl"]
    assert sum(len(read_jsonl(path)) for path in shards) == 8 and not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"text": "a"}\n{"text": "b"}\n{"text": "c",}\n', r"corpus.jsonl:3: not valid JSON"),
        ('{"text": "a"}\n{"body": "b", "id": 2}\n', r"corpus.jsonl:2: no \"text\" key \(keys: \['body', 'id'\]\)"),
        (
            '{"text": 12}\n',
            r"corpus.jsonl:1: \"text\" is a number \(12\), not a string; give the document's text as a JSON string",
        ),
        ('["text", "a"]\n', r"corpus.jsonl:1: a JSON list, not an object"),
    ],
)
def test_bad_jsonl_lines_name_file_and_line(nlp, tmp_path, content, message):
    (tmp_path / "corpus.jsonl").write_text(content, encoding="utf8")
    with pytest.raises(ValueError, match=message):
        annotate_corpus(nlp, tmp_path / "corpus.jsonl", tmp_path / "out.jsonl", progress=False)


def test_a_run_that_wrote_nothing_leaves_nothing_and_the_same_command_runs_after_the_fix(nlp, tmp_path):
    (tmp_path / "corpus.jsonl").write_text('{"text": 5}\n{"text": "Mary lives in Paris"}\n', encoding="utf8")
    with pytest.raises(ValueError, match="corpus.jsonl:1"):
        annotate_corpus(nlp, tmp_path / "corpus.jsonl", tmp_path / "out.jsonl", progress=False)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["corpus.jsonl"]
    (tmp_path / "corpus.jsonl").write_text('{"text": "5"}\n{"text": "Mary lives in Paris"}\n', encoding="utf8")
    assert annotate_corpus(nlp, tmp_path / "corpus.jsonl", tmp_path / "out.jsonl", progress=False)["docs"] == 2
    assert len(read_jsonl(tmp_path / "out.jsonl")) == 2


@pytest.mark.parametrize("output", ["out.jsonl", "shards"])
def test_an_empty_input_warns(nlp, tmp_path, output):
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf8")
    with pytest.warns(UserWarning, match="holds no document"):
        annotate_corpus(nlp, tmp_path / "empty.jsonl", tmp_path / output, progress=False)
    assert (tmp_path / output).exists()


def test_bad_inputs_and_outputs_are_refused(nlp, corpus, tmp_path):
    def run(source, output, **options):
        return annotate_corpus(nlp, source, output, progress=False, **options)

    (tmp_path / "corpus.csv").write_text("text\n")
    with pytest.raises(ValueError, match=r"Unknown input suffix '.csv'.*give a .txt file"):
        run(tmp_path / "corpus.csv", tmp_path / "out.jsonl")
    with pytest.raises(ValueError, match="missing.txt does not exist"):
        run(tmp_path / "missing.txt", tmp_path / "out.jsonl")
    (tmp_path / "latin1.txt").write_bytes("Paris\nZoë\n".encode("latin-1"))
    with pytest.raises(ValueError, match="latin1.txt:2: not UTF-8.*convert the file to UTF-8"):
        run(tmp_path / "latin1.txt", tmp_path / "out.jsonl")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no .spacy file"):
        run(tmp_path / "empty", tmp_path / "from_empty.jsonl")
    assert not (tmp_path / "from_empty.jsonl").exists()
    with pytest.raises(ValueError, match="would overwrite the input"):
        run(corpus, corpus, overwrite=True)
    with pytest.raises(ValueError, match=r"Unknown output suffix '.json'"):
        run(corpus, tmp_path / "out.json")
    (tmp_path / "folder.spacy").mkdir()
    with pytest.raises(ValueError, match=r"folder.spacy is a directory: give a .spacy file path"):
        run(corpus, tmp_path / "folder.spacy")
    with pytest.raises(ValueError, match="batch_size=0"):
        run(corpus, tmp_path / "zero.jsonl", batch_size=0)
    assert not (tmp_path / "zero.jsonl").exists() and not (tmp_path / "out.spacy").exists()


def test_an_existing_output_needs_overwrite(pipeline, nlp, corpus, tmp_path):
    (tmp_path / "out.jsonl").write_text("old\n")
    done = cli("apply", pipeline, corpus, tmp_path / "out.jsonl", "--no-progress")
    assert isinstance(done.exception, ValueError) and "exists: pass --force" in str(done.exception)
    assert (tmp_path / "out.jsonl").read_text() == "old\n"
    done = cli("apply", pipeline, corpus, tmp_path / "out.jsonl", "--overwrite", "--no-progress")
    assert done.exit_code == 0 and len(read_jsonl(tmp_path / "out.jsonl")) == 37
    # a shard directory is replaced as a whole (no stale shard is left), unless it holds other files
    annotate_corpus(nlp, corpus, tmp_path / "shards", shard_size=5, progress=False)
    with pytest.raises(ValueError, match="is not empty: pass --force"):
        annotate_corpus(nlp, corpus, tmp_path / "shards", shard_size=20, progress=False)
    annotate_corpus(nlp, corpus, tmp_path / "shards", shard_size=20, overwrite=True, progress=False)
    assert len(list((tmp_path / "shards").iterdir())) == 2
    (tmp_path / "shards" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="holds other files than .spacy shards"):
        annotate_corpus(nlp, corpus, tmp_path / "shards", overwrite=True, progress=False)
    assert (tmp_path / "shards" / "notes.txt").exists()


def test_command_line_errors(pipeline, corpus, tmp_path):
    done = cli("apply", tmp_path / "no_pipeline", corpus, tmp_path / "out.jsonl")
    assert isinstance(done.exception, ValueError)
    assert "neither a directory nor an installed package" in str(done.exception)
    (tmp_path / "training" / "model-best").mkdir(parents=True)
    (tmp_path / "training" / "model-best" / "config.cfg").write_text("")
    done = cli("apply", tmp_path / "training", corpus, tmp_path / "out.jsonl")
    assert isinstance(done.exception, ValueError)
    assert "no saved pipeline (it has no config.cfg)" in str(done.exception) and "model-best" in str(done.exception)
    done = cli("apply", pipeline, corpus, tmp_path / "out.jsonl", "--n-process", 0)
    assert done.exit_code == 2 and "--n-process" in done.output
    done = cli("apply", pipeline, corpus, tmp_path / "out.jsonl", "--n-process", 2, "--gpu-id", 0)
    assert isinstance(done.exception, ValueError) and "cannot share a GPU" in str(done.exception)
    assert not (tmp_path / "out.jsonl").exists()


def test_span_scores_must_be_one_finite_number_per_span():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["Mary", "lives", "in", "Paris"])
    group = SpanGroup(doc, name="mentions", spans=[doc[0:1], doc[3:4]])
    doc.spans["mentions"] = group
    assert "score" not in doc_record(doc, {})["spans"]["mentions"][0]
    group.attrs["scores"] = np.array([0.5, 0.25, 0.25], dtype=np.float32)
    with pytest.raises(ValueError, match=r"doc.spans\['mentions'\].*shape \(3,\), not one score per span \(2\)"):
        doc_record(doc, {})
    group.attrs["scores"] = np.array([0.5, np.nan], dtype=np.float32)
    with pytest.raises(ValueError, match="NaN or infinite"):
        doc_record(doc, {})
    group.attrs["scores"] = np.array([0.1, 1 / 3], dtype=np.float32)
    assert [s["score"] for s in doc_record(doc, {})["spans"]["mentions"]] == [0.1, 0.33333334]


@pytest.mark.slow
def test_spawned_workers_write_the_bytes_of_one_process(nlp, corpus, tmp_path):
    """Under spawn (macOS and Windows' start method) the job and its pipeline are pickled to each worker."""
    annotate_corpus(nlp, corpus, tmp_path / "one.jsonl", shard_size=5, progress=False)
    summary = annotate_corpus(
        nlp, corpus, tmp_path / "spawn.jsonl", n_process=2, shard_size=5, start_method="spawn", progress=False
    )
    assert summary["docs"] == 37
    assert (tmp_path / "spawn.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()


def test_an_unreadable_docbin_input_leaves_nothing(nlp, tmp_path):
    (tmp_path / "docs.spacy").write_bytes(b"not a DocBin")
    with pytest.raises(ValueError, match=r"docs.spacy: not a readable DocBin"):
        annotate_corpus(nlp, tmp_path / "docs.spacy", tmp_path / "out.jsonl", n_process=2, progress=False)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["docs.spacy"]
