"""``spacy_depner.evaluation.span_judging``: predicted spans judged against
gold by exact boundaries and label."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, Span

from spacy_depner.evaluation.span_judging import judge


def test_judge_marks_exact_matches_of_span_and_label():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="a b c d e".split())
    doc.spans["k"] = [Span(doc, 0, 2, "PER"), Span(doc, 2, 3, "LOC"), Span(doc, 3, 5, "ORG")]
    doc.spans["k"].attrs["scores"] = np.array([0.9, 0.4, 0.7], dtype=np.float32)
    empty = Doc(nlp.vocab, words=["x"])
    empty.spans["k"] = []  # an empty group without scores (spaCy's spancat writes such)
    gold = [{(0, 2, "PER"), (2, 3, "ORG"), (3, 4, "ORG")}, {(0, 1, "LOC")}]
    p, correct, n_gold = judge([doc, empty], gold, "k", "comp")
    assert p.tolist() == pytest.approx([0.9, 0.4, 0.7]) and correct.tolist() == [True, False, False] and n_gold == 4
    del doc.spans["k"].attrs["scores"]
    with pytest.raises(ValueError, match="without probabilities"):
        judge([doc], gold[:1], "k", "comp")
    with pytest.raises(ValueError, match="no span group 'other'"):
        judge([doc], gold[:1], "other", "comp")
