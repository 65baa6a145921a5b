"""CoNLL-U + UNER IOB2 reading, on a hand-made fixture (tests/data/tiny.*)."""

from pathlib import Path

import pytest
import spacy
from spacy.util import registry

from spacy_depner.readers.conllu import read_conllu
from spacy_depner.readers.uner import clean_tags, read_uner_corpus

DATA = Path(__file__).parents[1] / "data"
CONLLU, IOB2 = DATA / "tiny.conllu", DATA / "tiny.iob2"


def test_conllu_words_spaces_and_trees():
    s1, s2, s3 = read_conllu(CONLLU)
    assert s1.sent_id == "s1" and s1.newdoc_id == "doc1"
    assert s1.spaces == [True, True, True, True, False, True]
    # multiword token "don't" = do + n't: no space inside; empty node 8.1 skipped
    assert s2.words == ["I", "do", "n't", "like", "Acme", "Corp", "in", "Paris"]
    assert s2.spaces[1] is False and s2.spaces[2] is True
    assert s2.heads == [3, 3, 3, -1, 5, 3, 7, 3]


def test_clean_tags_maps_other_types_to_o_and_repairs_i_tags():
    tags, repairs, removed = clean_tags(["B-OTH", "I-LOC", "I-LOC", "B-O", "I-PER"], ["PER", "LOC"])
    assert tags == ["O", "B-LOC", "I-LOC", "O", "B-PER"]
    assert repairs == 2
    assert removed == {"B-OTH": 1, "B-O": 1}


def test_join_on_sent_id_with_different_orders():
    corpus = read_uner_corpus(CONLLU, IOB2)
    assert [s.sent_id for s in corpus.sentences] == ["s1", "s2", "s3"]
    assert corpus.tags[1] == ["O", "O", "O", "O", "B-ORG", "I-ORG", "O", "B-LOC"]
    assert corpus.repairs == 1


@pytest.mark.parametrize("dependencies,has_trees", [("given", True), ("predicted", False)])
def test_registered_reader(dependencies, has_trees):
    reader = registry.readers.get("spacy_depner.UNERCorpus.v1")(CONLLU, IOB2, dependencies=dependencies)
    examples = list(reader(spacy.blank("en")))
    assert len(examples) == 3
    assert [e.predicted.has_annotation("DEP") for e in examples] == [has_trees] * 3
    assert examples[0].predicted.text == "John Smith visited New York."
    assert [(e.text, e.label_) for e in examples[1].reference.ents] == [("Acme Corp", "ORG"), ("Paris", "LOC")]
    assert examples[1].reference[3].dep_ == "ROOT" and examples[1].reference[0].head.i == 3


def test_reader_limit():
    reader = registry.readers.get("spacy_depner.UNERCorpus.v1")(CONLLU, IOB2, limit=2)
    assert len(list(reader(spacy.blank("en")))) == 2


def test_bad_input_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="given' or 'predicted"):
        registry.readers.get("spacy_depner.UNERCorpus.v1")(CONLLU, IOB2, dependencies="gold")
    with pytest.raises(ValueError, match="not found"):
        read_uner_corpus(tmp_path / "missing.conllu", IOB2)
    wrong = tmp_path / "wrong.iob2"
    wrong.write_text(IOB2.read_text().replace("Tahoe", "Taho"))
    with pytest.raises(ValueError, match="'s3'"):
        read_uner_corpus(CONLLU, wrong)
