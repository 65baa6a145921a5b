"""``python -m spacy_depner convert``: round trips through DocBin files on the
fixtures of tests/data (the Docs read back against what the readers give,
and values written by hand from the fixture files), spacy.Corpus.v1 reading
the output, and the GENIA 3.02 XML to JSON lines."""

import json
from pathlib import Path

import spacy
from spacy.tokens import DocBin
from spacy.util import registry

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run
from spacy_depner.readers.genia import read_genia
from spacy_depner.readers.gum import read_gum
from spacy_depner.readers.uner import read_uner_corpus

DATA = Path(__file__).parents[1] / "data"
CONLLU, IOB2 = DATA / "tiny.conllu", DATA / "tiny.iob2"
GENIA, GUM = DATA / "nested_genia.jsonl", DATA / "nested_gum.conllu"


def convert(capsys, *args) -> dict:
    """Run ``convert ARGS``; the JSON it printed."""
    assert run(app, ["convert", *map(str, args)], "python -m spacy_depner") == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def read_back(path: Path):
    nlp = spacy.blank("en")
    return list(DocBin().from_disk(path).get_docs(nlp.vocab))


def tree(doc):
    """Heads within the Doc, -1 for a root (the readers' convention)."""
    return [-1 if t.head.i == t.i else t.head.i for t in doc]


def spans(doc, key):
    return sorted((s.start, s.end, s.label_) for s in doc.spans[key])


def corpus_examples(path: Path):
    """What ``spacy train`` gets from the file: spacy.Corpus.v1's Examples."""
    return list(registry.readers.get("spacy.Corpus.v1")(path=path, gold_preproc=False)(spacy.blank("en")))


def test_conllu_iob2_round_trip(capsys, tmp_path):
    output = tmp_path / "ewt.spacy"
    summary = convert(capsys, "conllu-iob2", CONLLU, output, "--iob2", IOB2)
    assert (summary["docs"], summary["words"], summary["ents"]) == (3, 17, 5)
    docs = read_back(output)
    corpus = read_uner_corpus(CONLLU, IOB2)
    for doc, sentence, tags in zip(docs, corpus.sentences, corpus.tags):
        assert [t.text for t in doc] == sentence.words
        assert tree(doc) == sentence.heads
        assert [t.pos_ for t in doc] == sentence.upos
        assert [f"{t.ent_iob_}-{t.ent_type_}" if t.ent_type_ else "O" for t in doc] == tags
    # by hand from tiny.conllu / tiny.iob2 (s2: B-OTH is dropped, so its I-LOC starts an entity)
    assert docs[0].text == "John Smith visited New York."
    assert [(e.text, e.label_) for e in docs[0].ents] == [("John Smith", "PER"), ("New York", "LOC")]
    assert docs[1].text == "I don't like Acme Corp in Paris"
    assert [(e.text, e.label_) for e in docs[1].ents] == [("Acme Corp", "ORG"), ("Paris", "LOC")]
    assert [t.head.i for t in docs[1]] == [3, 3, 3, 3, 5, 3, 7, 3] and docs[1][3].dep_ == "ROOT"
    assert (docs[0][2].lemma_, docs[0][0].tag_, docs[0][0].dep_) == ("visit", "NNP", "nsubj")
    examples = corpus_examples(output)
    assert [[(e.text, e.label_) for e in eg.reference.ents] for eg in examples] == [
        [(e.text, e.label_) for e in d.ents] for d in docs
    ]
    assert [tree(eg.reference) for eg in examples] == [tree(d) for d in docs]
    assert [eg.predicted.text for eg in examples] == [d.text for d in docs]


def test_conllu_iob2_documents_and_labels(capsys, tmp_path):
    output = tmp_path / "ewt_documents.spacy"
    convert(capsys, "conllu-iob2", CONLLU, output, "--iob2", IOB2, "--documents", "--labels", "LOC")
    (doc,) = read_back(output)  # tiny.conllu is one document (# newdoc id = doc1)
    assert [len(s) for s in doc.sents] == [6, 8, 3]
    assert [(e.text, e.label_) for e in doc.ents] == [("New York", "LOC"), ("Paris", "LOC"), ("Lake Tahoe", "LOC")]
    assert tree(doc)[6:14] == [9, 9, 9, -1, 11, 9, 13, 9]  # s2, offset by the 6 words of s1


def test_genia_round_trip(capsys, tmp_path):
    output = tmp_path / "genia.spacy"
    summary = convert(capsys, "genia", GENIA, output)
    assert summary["spans"] == {"nested_ner": 14}  # 4 + 6 + 4 mentions
    docs = read_back(output)
    sentences = read_genia(GENIA)
    assert len(docs) == len(sentences) == 3
    for doc, (words, mentions) in zip(docs, sentences):
        assert [t.text for t in doc] == words
        assert spans(doc, "nested_ner") == sorted(mentions)
    # by hand from nested_genia.jsonl: crossing spans and one span with two types are kept
    assert spans(docs[0], "nested_ner") == [(0, 1, "protein"), (0, 2, "DNA"), (1, 3, "DNA"), (4, 6, "protein")]
    assert (7, 8, "DNA") in spans(docs[1], "nested_ner") and (7, 8, "protein") in spans(docs[1], "nested_ner")
    examples = corpus_examples(output)
    assert [spans(eg.reference, "nested_ner") for eg in examples] == [spans(d, "nested_ner") for d in docs]


def test_genia_spans_key(capsys, tmp_path):
    convert(capsys, "genia", GENIA, tmp_path / "genia.spacy", "--spans-key", "mentions")
    assert all(list(doc.spans) == ["mentions"] for doc in read_back(tmp_path / "genia.spacy"))


def test_gum_round_trip(capsys, tmp_path):
    output = tmp_path / "gum.spacy"
    convert(capsys, "gum", GUM, output)
    docs = read_back(output)
    sentences = [s for document in read_gum(GUM) for s in document]
    assert len(docs) == len(sentences) == 3
    for doc, gum in zip(docs, sentences):
        assert [t.text for t in doc] == gum.sentence.words
        assert tree(doc) == gum.sentence.heads
        assert spans(doc, "nested_ner") == sorted((m.start, m.end, m.label) for m in gum.mentions)
    # by hand from nested_gum.conllu: "Kim's sister", "Kim", "the old museum in Paris" (place and
    # organization), "Paris" (two entities with the same span and type: kept once)
    assert spans(docs[0], "nested_ner") == [
        (0, 1, "person"),
        (0, 3, "person"),
        (4, 9, "organization"),
        (4, 9, "place"),
        (8, 9, "place"),
    ]
    heads = {
        (s.start, s.end): (h.text, h.label_)
        for s, h in zip(docs[0].spans["nested_ner"], docs[0].spans["nested_ner_heads"])
    }
    assert heads[(0, 3)] == ("sister", "person") and heads[(4, 9)] == ("museum", "place")
    assert docs[0][3].dep_ == "ROOT" and docs[0][0].head.text == "sister"
    examples = corpus_examples(output)
    assert [spans(eg.reference, "nested_ner_heads") for eg in examples] == [spans(d, "nested_ner_heads") for d in docs]
    assert [tree(eg.reference) for eg in examples] == [tree(d) for d in docs]


def test_gum_documents(capsys, tmp_path):
    convert(capsys, "gum", GUM, tmp_path / "gum.spacy", "--documents")
    docs = read_back(tmp_path / "gum.spacy")
    assert [len(d) for d in docs] == [16, 10]
    assert [(s.text, s.label_) for s in docs[0].spans["nested_ner"] if s.start >= 10] == [
        ("She", "person"),
        ("it", "place"),
    ]


def test_genia_xml(capsys, tmp_path):
    summary = convert(capsys, "genia-xml", DATA / "genia_3.02_fixture.xml", tmp_path / "genia", "--split", "3,1,1")
    assert summary["split"] == {"train": 3, "dev": 1, "test": 1} and summary["mentions"] == 13
    lines = (DATA / "genia_3.02_fixture.jsonl").read_text(encoding="utf8").splitlines(keepends=True)
    assert (tmp_path / "genia" / "train.jsonl").read_text(encoding="utf8") == "".join(lines[:3])
    assert (tmp_path / "genia" / "test.jsonl").read_text(encoding="utf8") == lines[4]


def error(capsys, *args) -> str:
    """Run ``convert ARGS``, check the status is 1 and the error one line (after
    any progress bar); that line."""
    assert run(app, ["convert", *map(str, args)], "python -m spacy_depner") == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, lines
    return lines[0]


def test_bad_input_is_one_line(capsys, tmp_path):
    assert "needs --iob2" in error(capsys, "conllu-iob2", CONLLU, tmp_path / "x.spacy")
    assert "--iob2 goes with conllu-iob2" in error(capsys, "gum", GUM, tmp_path / "x.spacy", "--iob2", IOB2)
    assert "must be a .spacy file" in error(capsys, "genia", GENIA, tmp_path / "x.json")
    assert "--documents goes with conllu-iob2 or gum" in error(
        capsys, "genia", GENIA, tmp_path / "x.spacy", "--documents"
    )
    assert str(tmp_path / "missing.jsonl") in error(capsys, "genia", tmp_path / "missing.jsonl", tmp_path / "x.spacy")
    assert "'conllu-iob2', 'genia', 'gum', 'genia-xml'" in error(capsys, "ewt", CONLLU, tmp_path / "x.spacy")
    assert "add up to 5" in error(
        capsys, "genia-xml", DATA / "genia_3.02_fixture.xml", tmp_path / "g", "--split", "1,1,1"
    )
    assert not list(tmp_path.iterdir())


def first_sentences(path: Path, n: int, out: Path) -> Path:
    """The first ``n`` sentences of a CoNLL-U or IOB2 file (blocks between blank lines), written to ``out``."""
    blocks = [b for b in path.read_text(encoding="utf8").split("\n\n") if b.strip()]
    out.write_text("\n\n".join(blocks[:n]) + "\n\n", encoding="utf8")
    return out


def test_a_slice_joins_on_the_sentences_both_files_have(capsys, tmp_path):
    head = first_sentences(CONLLU, 2, tmp_path / "head.conllu")
    line = error(capsys, "conllu-iob2", head, tmp_path / "x.spacy", "--iob2", IOB2)
    assert "the CoNLL-U file has 2 sentences and the IOB2 file 3" in line and "--shared" in line
    summary = convert(capsys, "conllu-iob2", head, tmp_path / "head.spacy", "--iob2", IOB2, "--shared")
    assert summary["docs"] == 2 and summary["dropped_sentences"] == {"conllu": 0, "iob2": 1}
    assert [[t.text for t in doc] for doc in read_back(tmp_path / "head.spacy")] == [
        ["John", "Smith", "visited", "New", "York", "."],
        ["I", "do", "n't", "like", "Acme", "Corp", "in", "Paris"],
    ]
    # the IOB2 file sliced instead: its first block is s2 (tiny.iob2 is not in CoNLL-U order)
    iob2_head = first_sentences(IOB2, 1, tmp_path / "head.iob2")
    summary = convert(capsys, "conllu-iob2", CONLLU, tmp_path / "s2.spacy", "--iob2", iob2_head, "--shared")
    assert summary["docs"] == 1 and summary["dropped_sentences"] == {"conllu": 2, "iob2": 0}
    assert [t.text for t in read_back(tmp_path / "s2.spacy")[0]][:2] == ["I", "do"]
    assert "--shared goes with conllu-iob2" in error(capsys, "genia", GENIA, tmp_path / "x.spacy", "--shared")


def test_limit_writes_the_first_docs(capsys, tmp_path):
    summary = convert(capsys, "conllu-iob2", CONLLU, tmp_path / "one.spacy", "--iob2", IOB2, "--limit", 1)
    assert summary["docs"] == 1 and [t.text for t in read_back(tmp_path / "one.spacy")[0]][0] == "John"
    summary = convert(capsys, "genia", GENIA, tmp_path / "genia.spacy", "--limit", 2)
    assert summary["docs"] == 2 and "dropped_sentences" not in summary


def test_auto_reads_a_conllu_file_as_gum_only_with_gums_entities(capsys, tmp_path):
    """A UD file (no Entity= in MISC) without --iob2 is refused by auto,
    naming --iob2 and -c gum; GUM's own file is still read as gum."""
    line = error(capsys, CONLLU, tmp_path)
    assert "no GUM entity annotation" in line and "--iob2" in line and "-c gum" in line
    assert not list(tmp_path.iterdir())
    assert convert(capsys, GUM, tmp_path)["spans"]["nested_ner"] > 0


def test_a_conversion_with_no_entity_fails_unless_allowed(capsys, tmp_path):
    """-c gum on a UD file yields Docs without a mention: one line saying
    so, nothing written; --allow-empty writes them."""
    line = error(capsys, CONLLU, tmp_path, "-c", "gum")
    assert "no entity" in line and "--allow-empty" in line and str(CONLLU) in line
    assert not list(tmp_path.iterdir())
    summary = convert(capsys, CONLLU, tmp_path, "-c", "gum", "--allow-empty")
    assert summary["docs"] == 3 and summary["ents"] == 0 and len(read_back(tmp_path / "tiny.spacy")) == 3
