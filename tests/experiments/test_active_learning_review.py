"""The simulated person of the active-learning study's review strategies
(regions, accept/reject), the training Docs of their reviews, and the report
of tokens and decisions, on inputs small enough to count by hand."""

import json

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span

from experiments.active_learning.report import report
from experiments.active_learning.review import (
    ANNOTATED,
    REJECTED,
    Review,
    answer_binary,
    answer_region,
    chosen_tasks,
    stretches,
    training_doc,
    widened,
)


def sentence():
    words = "Ann met Bob Smith in New York".split()
    return Doc(spacy.blank("en").vocab, words=words, ents=["B-PER", "O", "B-PER", "I-PER", "O", "B-LOC", "I-LOC"])


def test_a_region_is_widened_to_the_entities_it_cuts():
    doc = sentence()
    assert widened(doc, 3, 6) == (2, 7)  # cuts "Bob Smith" and "New York"
    assert widened(doc, 4, 5) == (4, 5)
    review = Review()
    assert answer_region(doc, {"region": [3, 6]}, review) == 5 and review.regions == [[2, 7]]


def test_a_proposal_is_accepted_when_span_and_label_are_gold():
    doc, review = sentence(), Review()
    assert answer_binary(doc, {"spans": [{"token_start": 2, "token_end": 3, "label": "PER"}]}, review)
    assert not answer_binary(doc, {"spans": [{"token_start": 2, "token_end": 3, "label": "ORG"}]}, review)
    assert not answer_binary(doc, {"spans": [{"token_start": 2, "token_end": 2, "label": "PER"}]}, review)
    assert review.accepted == [[2, 4, "PER"]] and review.rejected == [[2, 4, "ORG"], [2, 3, "PER"]]


def test_the_training_doc_knows_the_reviewed_tokens_only():
    review = Review(regions=[[4, 7]], accepted=[[0, 1, "PER"]], rejected=[[2, 4, "ORG"]])
    doc = training_doc(sentence(), review)
    assert [(e.start, e.end, e.label_) for e in doc.ents] == [(0, 1, "PER"), (5, 7, "LOC")]
    assert [t.ent_iob_ for t in doc] == ["B", "", "", "", "O", "B", "I"]  # met, Bob Smith: never reviewed
    assert [(s.start, s.end, s.label_) for s in doc.spans[REJECTED]] == [(2, 4, "ORG")]


def nested_sentence():
    """GENIA-like: "IL-2 gene expression in T cells" with a mention inside a mention inside a mention."""
    doc = Doc(spacy.blank("en").vocab, words="IL-2 gene expression in human T cells".split())
    doc.spans["nested_ner"] = [
        Span(doc, 0, 1, label="protein"),
        Span(doc, 0, 2, label="DNA"),
        Span(doc, 5, 7, label="cell_type"),
        Span(doc, 4, 7, label="cell_type"),
    ]
    return doc


def test_a_nested_region_is_widened_until_it_cuts_no_mention():
    doc = nested_sentence()
    # [6, 7) cuts "T cells" [5, 7); widened to it, it cuts "human T cells" [4, 7): two steps
    assert widened(doc, 6, 7, spans_key="nested_ner") == (4, 7)
    assert widened(doc, 1, 2, spans_key="nested_ner") == (0, 2)
    assert widened(doc, 2, 4, spans_key="nested_ner") == (2, 4)
    assert widened(doc, 6, 7) == (6, 7)  # the flat view: no doc.ents to widen to
    review = Review()
    assert answer_region(doc, {"region": [6, 7]}, review, "nested_ner") == 3 and review.regions == [[4, 7]]
    assert answer_binary(doc, {"spans": [{"token_start": 0, "token_end": 1, "label": "DNA"}]}, review, "nested_ner")


def test_the_nested_training_doc_holds_the_reviewed_mentions_and_regions():
    review = Review(regions=[[0, 1], [4, 7]])
    doc = training_doc(nested_sentence(), review, "nested_ner")
    # "IL-2 gene" [0, 2) is not wholly reviewed: unknown, not absent
    assert [(s.start, s.end, s.label_) for s in doc.spans["nested_ner"]] == [
        (0, 1, "protein"),
        (4, 7, "cell_type"),
        (5, 7, "cell_type"),
    ]
    assert [(s.start, s.end) for s in doc.spans[ANNOTATED]] == [(0, 1), (4, 7)]
    assert not doc.has_annotation("ENT_IOB")  # the flat view is not written


def test_tasks_within_the_budget():
    tasks = [{"region": [0, 3]}, {"region": [5, 9]}, {"region": [1, 6]}]
    assert chosen_tasks(tasks, "region", 6) == tasks[:2]  # 3 tokens, then 7: the budget is passed, stop
    assert chosen_tasks(tasks, "binary", 2) == tasks[:2]
    assert stretches(np.array([True, True, False, True])) == [(0, 2), (3, 4)]


def write(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def test_the_report_counts_what_a_person_reviewed(tmp_path):
    vocab = spacy.blank("en").vocab
    lengths = [10, 20, 30, 40]
    (tmp_path / "corpus").mkdir()
    DocBin(docs=[Doc(vocab, words=["w"] * n) for n in lengths]).to_disk(tmp_path / "corpus" / "train.spacy")
    seed = tmp_path / "seed_0"
    write(seed / "round_0" / "labelled.json", [0])  # 10 tokens
    write(seed / "round_0" / "test.json", {"ents_f": 0.40})
    write(seed / "random" / "round_1" / "labelled.json", [0, 2, 3])  # 80 tokens
    write(seed / "random" / "round_1" / "test.json", {"ents_f": 0.60})
    write(seed / "region" / "round_1" / "labelled.json", {"reviews": {}, "tokens": 20, "decisions": 0})
    write(seed / "region" / "round_1" / "test.json", {"ents_f": 0.70})
    write(seed / "binary" / "round_1" / "labelled.json", {"reviews": {}, "tokens": 10, "decisions": 50})
    write(seed / "binary" / "round_1" / "test.json", {"ents_f": 0.45})
    for folder, f in (("round_0", 0.40), ("random/round_1", 0.60), ("region/round_1", 0.50)):  # dev: region misses
        write(seed / folder / "model" / "model-best" / "meta.json", {"performance": {"ents_f": f}})
    text = report(tmp_path, [0], 1, 2, 1, 10, 100, {"region": 10, "binary": 50})
    assert "The same on dev (model-best's dev F1, what chose it): region: not reached" in text
    # region reaches 0.60 between 10 tokens (0.40) and 20 (0.70): at 10 + 10 x 2/3 = 16.7 tokens, of random's 80
    assert "region: 21% of random's tokens" in text
    # binary: +5 F1 points over 50 decisions: +100 per 1,000; region: +30 over 10 tokens: +3,000 per 1,000
    assert "binary: +100.00 F1 points per 1,000 decisions" in text
    assert "region: +3000.00 F1 points per 1,000 reviewed tokens" in text
    assert "| binary | 10 | 10 |" in text and "| random | 10 | 80 |" in text
    assert "| binary | 0 | 50 |" in text  # the decisions table
    assert "entropy" not in text  # strategies that did not run have no rows


def test_the_genia_report_has_the_spancat_twin_beside_each_strategy(tmp_path):
    vocab = spacy.blank("en").vocab
    (tmp_path / "corpus").mkdir()
    DocBin(docs=[Doc(vocab, words=["w"] * n) for n in [10, 30]]).to_disk(tmp_path / "corpus" / "train.spacy")
    seed = tmp_path / "seed_0"
    write(seed / "round_0" / "labelled.json", [0])
    write(seed / "round_0" / "test.json", {"spans_nested_ner_f": 0.40})
    write(seed / "round_0" / "test_twin.json", {"spans_nested_ner_f": 0.30})
    write(seed / "region" / "round_1" / "labelled.json", {"reviews": {}, "tokens": 15, "decisions": 0})
    write(seed / "region" / "round_1" / "test.json", {"spans_nested_ner_f": 0.55})
    write(seed / "region" / "round_1" / "test_twin.json", {"spans_nested_ner_f": 0.20})
    write(seed / "round_0" / "model" / "model-best" / "meta.json", {"performance": {"f_nested_ner": 0.4}})
    write(seed / "region" / "round_1" / "model" / "model-best" / "meta.json", {"performance": {"f_nested_ner": 0.5}})
    text = report(tmp_path, [0], 1, 1, 1, 10, 100, {"region": 5}, corpus="genia")
    assert "The same on dev (model-best's dev F1, what chose it): region: not complete" in text  # no random run
    assert "GENIA" in text
    assert "| region | 40.00 | 55.00 |" in text and "| region · spancat | 30.00 | 20.00 |" in text
    assert "| region · spancat | 10 | 15 |" in text  # the twin reviewed what its strategy reviewed


@pytest.mark.parametrize("strategy", ["region", "binary"])
def test_every_review_strategy_is_a_study_strategy(strategy):
    from experiments.active_learning.study import STRATEGIES

    assert strategy in STRATEGIES
