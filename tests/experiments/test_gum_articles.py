"""gum-articles: a pipeline that leaves out the "the" that the reference
brackets loses every such entity under the exact rule, and nothing once a
leading "the" is dropped from gold and predicted entities alike; the rule
leaves one-token entities and entities without an article as they are."""

import pytest
import spacy
from spacy.tokens import Doc, Span

from experiments.two_stage.gum_articles import (
    ArticleNeutral,
    Recorded,
    Replayed,
    article_table,
    reference_without_article,
)
from spacy_depner.evaluation.scoring_units import score_by_unit

WORDS = ["I", "visited", "the", "United", "States", "and", "The", "UN", "with", "Kim", "."]
SPACES = [True] * (len(WORDS) - 2) + [False, False]
GOLD = [(2, 5, "LOC"), (6, 8, "ORG"), (9, 10, "PER")]


class FixedEntities:
    """A stand-in pipeline that predicts the same entities for every Doc."""

    def __init__(self, vocab, entities):
        self.vocab, self.entities = vocab, entities

    def pipe(self, docs, batch_size=256):
        self.runs = getattr(self, "runs", 0) + 1
        for doc in docs:
            doc.set_ents([Span(doc, s, e, label=label) for s, e, label in self.entities], default="outside")
            yield doc


def docs():
    nlp = spacy.blank("en")
    reference = Doc(nlp.vocab, words=WORDS, spaces=SPACES)
    reference.set_ents([Span(reference, s, e, label=label) for s, e, label in GOLD])
    return nlp.vocab, reference, Doc(nlp.vocab, words=WORDS, spaces=SPACES)


def test_dropping_the_article_from_both_sides_forgives_the_convention_only():
    vocab, reference, text = docs()
    without = FixedEntities(vocab, [(3, 5, "LOC"), (7, 8, "ORG"), (9, 10, "PER")])  # UNER's convention
    exact = score_by_unit(without, [reference], [text], "document")
    assert (exact["p"], exact["r"]) == (1 / 3, 1 / 3)
    neutral = score_by_unit(ArticleNeutral(without), [reference_without_article(reference)], [text], "document")
    assert (neutral["p"], neutral["r"]) == (1.0, 1.0)
    with_article = FixedEntities(vocab, GOLD)  # the reference's own convention scores the same both ways
    neutral = score_by_unit(ArticleNeutral(with_article), [reference_without_article(reference)], [text], "document")
    assert neutral["f"] == 1.0
    wrong_label = FixedEntities(vocab, [(2, 5, "ORG")])  # a wrong label stays wrong
    neutral = score_by_unit(ArticleNeutral(wrong_label), [reference_without_article(reference)], [text], "document")
    assert neutral["p"] == 0.0


def test_reference_without_article_keeps_one_token_entities_and_the_original():
    vocab, reference, _ = docs()
    reference.set_ents([Span(reference, 2, 3, label="ORG"), Span(reference, 6, 8, label="ORG")])
    stripped = reference_without_article(reference)
    assert [(e.start, e.end) for e in stripped.ents] == [(2, 3), (7, 8)]
    assert [(e.start, e.end) for e in reference.ents] == [(2, 3), (6, 8)]


def test_article_table_reports_the_gain_per_pipeline_and_the_counts():
    text = article_table(
        {"ours": [(30.0, 40.0), (32.0, 41.0)], "mapped": [(35.0, 38.0)]}, {"dev": (100, 1), "gum": (50, 12)}
    )
    assert text.startswith("# GUM's article convention")
    assert "| ours | 31.00 ± 1.41 | 40.50 ± 0.71 | 9.50 ± 0.71 |" in text
    assert "| mapped | 35.00 | 38.00 | 3.00 |" in text
    assert '12 of 50 gold entities begin with "the" (24.0%)' in text


@pytest.mark.parametrize("unit", ["document", "sentence"])
def test_the_article_neutral_score_replays_the_one_run_of_the_pipeline(unit):
    vocab, reference, text = docs()
    reference[0].is_sent_start, reference[6].is_sent_start = True, True
    text[0].is_sent_start, text[6].is_sent_start = True, True
    pipeline = FixedEntities(vocab, [(3, 5, "LOC")] if unit == "document" else [(0, 1, "PER")])
    recorded = Recorded(pipeline)
    exact = score_by_unit(recorded, [reference], [text], unit)
    replayed = score_by_unit(ArticleNeutral(Replayed(recorded)), [reference_without_article(reference)], [text], unit)
    assert pipeline.runs == 1
    again = FixedEntities(vocab, pipeline.entities)
    rerun = score_by_unit(ArticleNeutral(again), [reference_without_article(reference)], [text], unit)
    assert (replayed["p"], replayed["r"]) == (rerun["p"], rerun["r"])
    assert exact["f"] == score_by_unit(again, [reference], [text], unit)["f"]
    with pytest.raises(ValueError, match="same order"):
        list(Replayed(recorded).pipe([text[:3].as_doc()]))
