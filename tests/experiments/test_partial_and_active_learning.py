"""The partial-annotation study's entity removal and the active-learning
study's share of annotation, on small inputs."""

import pytest
import spacy
from spacy.tokens import Doc

from experiments.active_learning.report import share_needed
from experiments.partial.study import remove_entities


def test_removed_entities_are_missing_or_outside_and_complete_docs_lost_none():
    nlp = spacy.blank("en")
    docs = [
        Doc(nlp.vocab, words=["Ann", "met", "Bob", "in", "Paris"], ents=["B-PER", "O", "B-PER", "O", "B-LOC"])
        for _ in range(20)
    ]
    outside, missing, complete = remove_entities(docs, 0.5, seed=3)
    kept = sum(len(doc.ents) for doc in missing)
    assert kept == 30 and sum(len(doc.ents) for doc in outside) == 30  # half of the 60 entities removed
    for as_o, partial, doc in zip(outside, missing, docs):
        assert [e.text for e in as_o.ents] == [e.text for e in partial.ents]
        gone = {e.start for e in doc.ents} - {e.start for e in partial.ents}
        assert {t.i for t in partial if t.ent_iob_ == ""} == gone
        assert all(as_o[i].ent_iob_ == "O" for i in gone)
    assert len(complete) == sum(len(d.ents) == 3 for d in missing) and all(len(d.ents) == 3 for d in complete)
    again, _, _ = remove_entities(docs, 0.5, seed=3)
    assert [[e.start for e in d.ents] for d in again] == [[e.start for e in d.ents] for d in outside]


def test_share_needed_interpolates_between_rounds():
    sizes = [500, 1000, 1500]
    assert share_needed([0.5, 0.6, 0.7], sizes, 0.65) == pytest.approx(1250 / 1500)
    assert share_needed([0.7, 0.8, 0.9], sizes, 0.6) == pytest.approx(500 / 1500)
    assert share_needed([0.5, 0.55, 0.6], sizes, 0.7) is None
