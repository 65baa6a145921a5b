"""``python -m spacy_depner import-annotations``: each format to a DocBin
that ``DocBin.from_disk`` reads back with the entities, missing tokens and
span groups written by hand here, the counts it prints, the tokenizer of
--model, and errors as one line naming the file and line."""

import json
from pathlib import Path

import spacy
from annotation_docs import ents, group, iob, write_lines
from spacy.tokenizer import Tokenizer
from spacy.tokens import DocBin

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run

ADA = "Ada Lovelace met Charles Babbage in London."  # Ada0 Lovelace1 met2 Charles3 Babbage4 in5 London6 .7
GRACE = "Grace Hopper worked at Harvard University in Cambridge."  # ... Harvard4 University5 in6 Cambridge7 .8


def import_annotations(capsys, *args) -> dict:
    """Run ``import-annotations ARGS``; the JSON it printed."""
    assert run(app, ["import-annotations", *map(str, args)], "python -m spacy_depner") == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def failure(capsys, *args) -> str:
    """Run ``import-annotations ARGS``, which must fail; its stderr."""
    assert run(app, ["import-annotations", *map(str, args)], "python -m spacy_depner") == 1
    return capsys.readouterr().err


def read_back(path: Path):
    return list(DocBin().from_disk(path).get_docs(spacy.blank("en").vocab))


def prodigy_tasks(path: Path) -> Path:
    """Prodigy tasks written by hand (character spans; tokens where the tool gave them)."""
    return write_lines(
        path,
        [
            {
                "text": ADA,
                "spans": [{"start": 0, "end": 12, "label": "PER"}],
                "answer": "accept",
                "meta": {"id": 1},
                "_view_id": "ner_manual",
            },
            # no _view_id, one span without token indices: a binary decision (ner.teach), grouped with line 4
            {"text": GRACE, "spans": [{"start": 23, "end": 41, "label": "ORG"}], "answer": "reject"},
            {"text": GRACE, "spans": [], "answer": "ignore"},
            {
                "text": GRACE,
                "spans": [{"start": 45, "end": 54, "label": "LOC", "token_start": 7, "token_end": 7}],
                "answer": "accept",
                "meta": {"region": [6, 9]},
                "_view_id": "ner_manual",
            },
        ],
    )


def test_prodigy_flat(capsys, tmp_path):
    output = tmp_path / "prodigy.spacy"
    summary = import_annotations(capsys, "prodigy", prodigy_tasks(tmp_path / "tasks.jsonl"), output)
    assert summary == {
        "output": str(output),
        "tasks": 4,
        "docs": 2,
        "accepted": 2,
        "rejected": 1,
        "ignored": 1,
        "tokens_reviewed": 8 + 3,
        "skipped": {},
    }
    docs = read_back(output)
    assert [ents(doc) for doc in docs] == [[("Ada Lovelace", "PER")], [("Cambridge", "LOC")]]
    assert [iob(doc) for doc in docs] == ["B I O O O O O O", "- - - - - - O B O"]
    assert [group(doc, "incorrect_spans") for doc in docs] == [[], [(4, 6, "ORG")]]
    tasks = tmp_path / "tasks.jsonl"
    assert docs[0].user_data["meta"] == {"id": 1, "source": f"{tasks}:1"}
    assert docs[1].user_data["meta"]["tasks"] == ({"source": f"{tasks}:2"}, {"source": f"{tasks}:4"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prodigy.spacy", "tasks.jsonl"]


def test_label_studio_nested_with_named_groups(capsys, tmp_path):
    export = tmp_path / "export.json"
    result = {"type": "labels", "value": {"start": 23, "end": 54, "text": "Harvard University in Cambridge"}}
    tasks = [
        {
            "id": 5,
            "data": {"text": GRACE, "region": [3, 9]},
            "annotations": [
                {
                    "result": [
                        {**result, "value": {**result["value"], "labels": ["ORG"]}},
                        {"type": "labels", "value": {"start": 45, "end": 54, "text": "Cambridge", "labels": ["LOC"]}},
                    ]
                }
            ],
        }
    ]
    export.write_text(json.dumps(tasks), encoding="utf8")
    output = tmp_path / "nested.spacy"
    keys = ["--spans-key", "nested_ner", "--annotated-key", "reviewed", "--incorrect-spans-key", "wrong"]
    summary = import_annotations(capsys, "label-studio", export, output, "--mode", "nested", *keys)
    assert (summary["docs"], summary["accepted"], summary["tokens_reviewed"]) == (1, 2, 6)
    (doc,) = read_back(output)
    assert group(doc, "nested_ner") == [(4, 8, "ORG"), (7, 8, "LOC")]
    assert group(doc, "reviewed") == [(3, 9, "")] and group(doc, "wrong") == []
    assert doc.ents == ()


def test_doccano_with_the_tokenizer_of_model(capsys, tmp_path):
    path = write_lines(tmp_path / "doccano.jsonl", [{"text": "Lovelace's notes", "label": [[0, 10, "PER"]]}])
    nlp = spacy.blank("en")
    nlp.tokenizer = Tokenizer(nlp.vocab)  # whitespace only: "Lovelace's" is one token
    nlp.to_disk(tmp_path / "pipeline")
    output = tmp_path / "doccano.spacy"
    import_annotations(capsys, "doccano", path, output, "--model", tmp_path / "pipeline")
    (doc,) = read_back(output)
    assert [t.text for t in doc] == ["Lovelace's", "notes"] and ents(doc) == [("Lovelace's", "PER")]
    write_lines(path, [{"text": "Lovelace's notes", "label": [[0, 8, "PER"]]}])
    error = failure(capsys, "doccano", path, output, "--model", tmp_path / "pipeline")
    assert f"{path}:1: span 'Lovelace' (PER, characters 0..8) does not fall on token boundaries" in error
    import_annotations(capsys, "doccano", path, output)  # blank English splits off 's
    assert [ents(doc) for doc in read_back(output)] == [[("Lovelace", "PER")]]


def test_errors_name_the_file_line_and_cause(capsys, tmp_path):
    output = tmp_path / "out.spacy"
    path = write_lines(
        tmp_path / "doccano.jsonl", [{"text": ADA, "label": []}, {"text": ADA, "label": [[4, 11, "PER"]]}]
    )
    error = failure(capsys, "doccano", path, output)
    assert error.startswith(
        f"error: {path}:2: span 'Lovelac' (PER, characters 4..11) does not fall on token boundaries"
    )
    assert "--model" in error and error.count("\n") == 1
    path.write_text('{"text": "Ada", "label": []}\n{"text": \n', encoding="utf8")
    assert failure(capsys, "doccano", path, output).startswith(f"error: {path}:2: not valid JSON")
    write_lines(path, [{"text": ADA, "spans": [], "answer": "maybe"}])
    assert failure(capsys, "prodigy", path, output).startswith(f"error: {path}:1: answer 'maybe' is not one of")
    write_lines(path, [{"text": ADA, "spans": [], "answer": "ignore"}])
    assert "holds no answered task (1 tasks, 1 ignored, skipped: none)" in failure(capsys, "prodigy", path, output)
    assert not output.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["doccano.jsonl"]


def test_unknown_format_and_output_suffix(capsys, tmp_path):
    path = write_lines(tmp_path / "doccano.jsonl", [{"text": ADA, "label": []}])
    error = failure(capsys, "brat", path, tmp_path / "out.spacy")
    assert "'brat' is not one of 'prodigy', 'label-studio', 'doccano'" in error
    assert "must be a .spacy file" in failure(capsys, "doccano", path, tmp_path / "out.json")


def test_the_options_of_each_tool_and_the_summary_by_reason(capsys, tmp_path):
    """--text-key and --annotators each (Label Studio), --unlabelled, --alignment-mode and
    --skip-misaligned (doccano), --prodigy-kind; what is left out is counted by reason."""
    result = {"from_name": "label", "to_name": "text", "type": "labels"}
    tasks = [
        {
            "id": 9,
            "data": {"ner": ADA},
            "annotations": [
                {
                    "id": 1,
                    "completed_by": 5,
                    "result": [{**result, "value": {"start": 0, "end": 12, "labels": ["PER"]}}],
                },
                {
                    "id": 2,
                    "completed_by": 6,
                    "result": [{**result, "value": {"start": 36, "end": 42, "labels": ["LOC"]}}],
                },
            ],
        }
    ]
    export = tmp_path / "export.json"
    export.write_text(json.dumps(tasks), encoding="utf8")
    output = tmp_path / "out.spacy"
    assert 'data has no "text" (its keys: ner)' in failure(capsys, "label-studio", export, output)
    summary = import_annotations(capsys, "label-studio", export, output, "--text-key", "ner", "--annotators", "each")
    assert (summary["tasks"], summary["docs"], summary["accepted"], summary["skipped"]) == (1, 2, 2, {})
    assert [ents(doc) for doc in read_back(output)] == [[("Ada Lovelace", "PER")], [("London", "LOC")]]
    assert [doc.user_data["meta"]["annotator"] for doc in read_back(output)] == [5, 6]

    lines = [{"text": ADA, "label": [[0, 11, "PER"]]}, {"text": GRACE, "label": []}]
    path = write_lines(tmp_path / "doccano.jsonl", lines)
    assert "--alignment-mode contract or expand" in failure(capsys, "doccano", path, output)
    summary = import_annotations(capsys, "doccano", path, output, "--skip-misaligned", "--unlabelled", "outside")
    assert summary["skipped"] == {
        "misaligned span (--skip-misaligned)": 1,
        "region left unreviewed: one of its accepted spans misaligned": 1,
    }
    assert [iob(doc) for doc in read_back(output)] == ["- - - - - - - -", "O O O O O O O O O"]
    summary = import_annotations(capsys, "doccano", path, output, "--alignment-mode", "expand")
    assert summary["skipped"] == {"unlabelled record (--unlabelled skip)": 1} and summary["docs"] == 1
    assert [ents(doc) for doc in read_back(output)] == [[("Ada Lovelace", "PER")]]

    scored = {"text": ADA, "spans": [{"start": 36, "end": 42, "token_start": 6, "token_end": 6, "label": "LOC"}]}
    scored["spans"][0]["score"] = 0.8
    path = write_lines(tmp_path / "teach.jsonl", [{**scored, "answer": "accept"}])
    assert "--prodigy-kind binary or manual" in failure(capsys, "prodigy", path, output)
    import_annotations(capsys, "prodigy", path, output, "--prodigy-kind", "binary")
    assert [iob(doc) for doc in read_back(output)] == ["- - - - - - B -"]


def test_offsets_utf16_reads_what_a_browser_counted(capsys, tmp_path):
    """Label Studio offsets without "text" in a text with emoji: the error names
    UTF-16 code units and --offsets utf-16 (no snapping), which reads them right."""
    text = "\U0001f600\U0001f600 Bob in Paris."  # Bob: characters 3..6, UTF-16 code units 5..8
    result = {
        "from_name": "label",
        "to_name": "text",
        "type": "labels",
        "value": {"start": 5, "end": 8, "labels": ["PER"]},
    }
    export = tmp_path / "export.json"
    export.write_text(json.dumps([{"id": 3, "data": {"text": text}, "annotations": [{"result": [result]}]}]))
    output = tmp_path / "out.spacy"
    error = failure(capsys, "label-studio", export, output, "--alignment-mode", "expand")
    assert "UTF-16 code units" in error and "--offsets utf-16" in error and "--alignment-mode" not in error
    summary = import_annotations(capsys, "label-studio", export, output, "--offsets", "utf-16")
    assert (summary["accepted"], summary["skipped"]) == (1, {})
    assert [ents(doc) for doc in read_back(output)] == [[("Bob", "PER")]]
