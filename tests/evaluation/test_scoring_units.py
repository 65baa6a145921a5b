"""Scoring a pipeline by documents or by sentences (scoring_units): by
sentences it is exactly ``spacy evaluate --gold-preproc`` on a DocBin of one
Doc per sentence (en_core_web_sm's real ner on UD English-EWT dev
documents), and its per-document counts add up to that score."""

from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.cli.evaluate import evaluate
from spacy.tokens import Doc, DocBin, Span

from spacy_depner.evaluation.metrics import prf_from_counts
from spacy_depner.evaluation.scoring_units import score_by_unit, split_by_sentence

DATA = Path(__file__).parents[2].parent / "shared" / "data"
SM = DATA / "models" / "en_core_web_sm-3.8.0"
ONTONOTES = {"PER": "PERSON", "ORG": "ORG", "LOC": "GPE"}
needs_data = pytest.mark.skipif(not SM.is_dir(), reason=f"needs en_core_web_sm and UD English-EWT in {DATA}")


def documents(vocab, count: int):
    """The first ``count`` EWT dev documents: (gold Docs with OntoNotes labels, input Docs with sentence starts)."""
    from spacy_depner.readers.documents import document_examples

    examples = document_examples(
        vocab,
        DATA / "ud_ewt" / "r2.9" / "en_ewt-ud-dev.conllu",
        DATA / "uner_ewt" / "en_ewt-ud-dev.iob2",
        "predicted",
        limit=count,
    )
    golds = []
    for eg in examples:
        gold = Doc(vocab, words=[t.text for t in eg.reference], spaces=[bool(t.whitespace_) for t in eg.reference])
        gold.ents = [Span(gold, e.start, e.end, label=ONTONOTES[e.label_]) for e in eg.reference.ents]
        for token, source in zip(gold, eg.predicted):
            token.is_sent_start = source.is_sent_start
        golds.append(gold)
    return golds, [eg.predicted for eg in examples]


@needs_data
def test_by_sentence_equals_spacy_evaluate_gold_preproc_on_a_sentence_docbin(tmp_path):
    nlp = spacy.load(SM, exclude=["parser", "tagger", "attribute_ruler", "lemmatizer", "senter"])
    nlp.to_disk(tmp_path / "pipeline")
    golds, inputs = documents(nlp.vocab, 12)
    gold_sentences, _, owners = split_by_sentence(golds, inputs)
    assert len(set(owners)) == 12 and len(gold_sentences) > 12
    DocBin(docs=gold_sentences).to_disk(tmp_path / "sentences.spacy")
    spacy_scores = evaluate(str(tmp_path / "pipeline"), tmp_path / "sentences.spacy", gold_preproc=True)
    ours = score_by_unit(nlp, golds, inputs, "sentence")
    assert spacy_scores["ents_f"] > 0.2  # the ner finds the people, organizations and places
    for key in ("p", "r", "f"):
        assert ours[key] == pytest.approx(spacy_scores[f"ents_{key}"], abs=1e-12)
    assert len(ours["sentence_counts"]) == 12  # one row per document, for the paired bootstrap
    assert prf_from_counts(np.asarray(ours["sentence_counts"]))["f"] == ours["f"]
    by_document = score_by_unit(nlp, golds, inputs, "document")
    assert by_document["unit"] == "document" and ours["unit"] == "sentence"
    # the ner sees other words by documents: its entities differ on these documents
    assert by_document["sentence_counts"] != ours["sentence_counts"]


def test_a_gold_entity_across_a_sentence_end_and_a_bad_unit_are_clear_errors():
    nlp = spacy.blank("en")
    words = ["Ada", "Lovelace", "wrote", "."]
    gold = Doc(nlp.vocab, words=words, ents=["B-PER", "I-PER", "O", "O"])
    doc = Doc(nlp.vocab, words=words, sent_starts=[True, True, False, False])
    with pytest.raises(ValueError, match="crosses a sentence end"):
        split_by_sentence([gold], [doc])
    with pytest.raises(ValueError, match="unit must be one of"):
        score_by_unit(nlp, [gold], [doc], "paragraph")
