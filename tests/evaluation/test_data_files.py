"""``spacy_depner.evaluation.data_files``: a data file's kind by its suffix,
where a DocBin holds its gold spans."""

from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

from spacy_depner.evaluation.data_files import data_kind, docbin_gold_key, file_examples

DATA = Path(__file__).parents[1] / "data"


def test_data_kinds_and_docbin_gold(tmp_path):
    assert [data_kind(Path(n)) for n in ("a.jsonl", "a.conllu", "a.spacy")] == ["genia", "gum", "docbin"]
    assert data_kind(Path("a.conllu"), Path("a.iob2")) == "uner"
    with pytest.raises(ValueError, match="unknown data file kind '.txt'"):
        data_kind(Path("a.txt"))
    with pytest.raises(ValueError, match="goes with a UD CoNLL-U file"):
        data_kind(Path("a.jsonl"), Path("a.iob2"))
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="a b c".split(), heads=[1, 1, 1], deps=["x", "ROOT", "y"])
    doc.spans["mentions"] = [Span(doc, 0, 2, "X")]
    doc.spans["mentions_heads"] = [Span(doc, 1, 2, "X")]
    assert docbin_gold_key([doc], "f", None) == "mentions"
    with pytest.raises(ValueError, match="no Doc has the span group 'k'"):
        docbin_gold_key([doc], "f", "k")
    DocBin(docs=[doc], store_user_data=True).to_disk(tmp_path / "d.spacy")
    examples, gold = file_examples(nlp, tmp_path / "d.spacy")
    assert gold == [{(0, 2, "X")}] and [t.head.i for t in examples[0].predicted] == [1, 1, 1]
    assert not examples[0].predicted.spans
    examples, gold = file_examples(nlp, DATA / "nested_genia.jsonl")
    assert len(examples) == len(gold) and sum(map(len, gold)) > 0
