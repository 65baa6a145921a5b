"""``python -m spacy_depner first-stage-folds``: every training document gets
the entities of the first stage that did not see it (the model of its fold),
the records read back by the document readers' ``first_stage`` setting."""

import json
from pathlib import Path

import pytest
import spacy

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run
from spacy_depner.readers.documents import create_uner_documents_reader, read_first_stage
from spacy_depner.workflows.first_stage_folds import cross_validated_records, fold_overrides

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CONFIG = ROOT / "configs" / "two_stage_first_ewt.cfg"


def fold_model(fold: int, vocab):
    """A pipeline that labels every "Smith" F<fold>: it tells which fold's model predicted a document."""
    nlp = spacy.blank("en", vocab=vocab)
    nlp.add_pipe("entity_ruler").add_patterns([{"label": f"F{fold}", "pattern": "Smith"}])
    return nlp


def documents(folder: Path, n: int):
    """N copies of the tiny CoNLL-U document and its IOB2 entities, each its own document (doc<d>, d<d>s<k>)."""
    conllu, iob2 = (DATA / "tiny.conllu").read_text(), (DATA / "tiny.iob2").read_text()
    copies = {suffix: "" for suffix in ("conllu", "iob2")}
    for d in range(n):
        copies["conllu"] += (
            conllu.replace("doc1", f"doc{d}").replace("sent_id = s", f"sent_id = d{d}s").rstrip("\n") + "\n\n"
        )
        copies["iob2"] += iob2.replace("sent_id = s", f"sent_id = d{d}s").rstrip("\n") + "\n\n"
    for suffix, text in copies.items():
        (folder / f"train.{suffix}").write_text(text)
    return folder / "train.conllu", folder / "train.iob2"


def test_each_document_gets_the_entities_of_the_model_of_its_fold(tmp_path):
    conllu, iob2 = documents(tmp_path, 5)
    nlp = spacy.blank("en")
    examples = list(create_uner_documents_reader(conllu, iob2)(nlp))
    records = cross_validated_records([fold_model(0, nlp.vocab), fold_model(1, nlp.vocab)], examples)
    assert [record["document"] for record in records] == [0, 1, 2, 3, 4]
    assert [{label for _, _, label in record["entities"]} for record in records] == [
        {"F0"},
        {"F1"},
        {"F0"},
        {"F1"},
        {"F0"},
    ]
    assert fold_overrides(2, 1) == {"paths.folds": 2, "paths.exclude_fold": 1}


def test_a_config_without_fold_paths_and_one_fold_are_one_line_errors(tmp_path, capsys):
    config = tmp_path / "plain.cfg"
    config.write_text('[paths]\ntrain = null\n\n[nlp]\nlang = "en"\n')
    assert run(app, ["first-stage-folds", str(config), str(tmp_path / "out"), "--folds", "2"]) == 1
    assert "has no [paths] folds and exclude_fold: its [corpora.train] reader" in capsys.readouterr().err
    assert run(app, ["first-stage-folds", str(CONFIG), str(tmp_path / "out"), "--folds", "1"]) == 1
    assert "--folds 1: cross-validation needs at least 2 folds" in capsys.readouterr().err


@pytest.mark.slow
def test_the_folds_train_and_their_records_read_back(tmp_path):
    conllu, iob2 = documents(tmp_path, 4)
    overrides = [
        f"--paths.{split}_{kind}={path}"
        for split in ("train", "dev")
        for kind, path in (("conllu", conllu), ("iob2", iob2))
    ]
    assert (
        run(
            app,
            [
                "first-stage-folds",
                str(CONFIG),
                str(tmp_path / "out"),
                "--folds",
                "2",
                *overrides,
                "--training.max_steps=2",
                "--training.eval_frequency=1",
            ],
        )
        == 0
    )
    assert all((tmp_path / "out" / f"fold{f}" / "model-best" / "meta.json").is_file() for f in (0, 1))
    path = tmp_path / "out" / "first_stage_train.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [record["document"] for record in records] == [0, 1, 2, 3]
    reader = create_uner_documents_reader(conllu, iob2, first_stage=path)
    assert all("first_stage" in eg.predicted.spans for eg in reader(spacy.blank("en")))
    assert sorted(read_first_stage(path)) == [0, 1, 2, 3]


def test_first_stage_corpus_folds_a_docbin_and_reads_its_records_back(tmp_path):
    """spacy_depner.FirstStageCorpus.v1: the Docs of a DocBin, dealt into folds,
    and the cross-validated records put in the input Docs' span group."""
    from spacy.tokens import DocBin

    from spacy_depner.readers.documents import first_stage_records
    from spacy_depner.readers.first_stage_corpus import create_first_stage_corpus

    nlp = spacy.blank("en")
    texts = [f"Smith met Jones {d} times ." for d in range(5)]
    DocBin(docs=[nlp(text) for text in texts]).to_disk(tmp_path / "train.spacy")
    examples = list(create_first_stage_corpus(tmp_path / "train.spacy")(nlp))
    assert [eg.reference.text for eg in examples] == texts
    kept = list(create_first_stage_corpus(tmp_path / "train.spacy", folds=2, exclude_fold=0)(nlp))
    assert [eg.reference.text for eg in kept] == [texts[1], texts[3]]
    records = cross_validated_records([fold_model(0, nlp.vocab), fold_model(1, nlp.vocab)], examples)
    path = tmp_path / "first_stage_train.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    read = list(create_first_stage_corpus(tmp_path / "train.spacy", first_stage=path, spans_key="trained_stage")(nlp))
    assert [[(s.text, s.label_) for s in eg.predicted.spans["trained_stage"]] for eg in read] == [
        [("Smith", f"F{d % 2}")] for d in range(5)
    ]
    assert first_stage_records([eg.predicted for eg in read], range(5)) == [
        {**record, "entities": []} for record in records
    ]  # the records sit in the span group, not in doc.ents
    path.write_text("".join(json.dumps(record) + "\n" for record in records[:3]))
    with pytest.raises(ValueError, match=r"no first-stage record for documents \[3, 4\]"):
        list(create_first_stage_corpus(tmp_path / "train.spacy", first_stage=path)(nlp))
