"""The unit a pipeline runs on when it is scored: whole documents, or one
Doc per sentence, as spaCy's ``Corpus`` gives the sentences of a
sentence-per-Doc DocBin to ``spacy evaluate --gold-preproc``.

A pipeline trained on one Doc per sentence (spaCy's ``ner`` on CoNLL-U
sentences) scores best run the same way; a two-stage pipeline, whose
document features count a Doc's other mentions, runs on documents. Both are
scored by spaCy's rule (``score_docs``) on the same gold entities, and the
per-Doc counts of a sentence run are summed by document, so that a paired
bootstrap over documents compares a run of each unit."""

from typing import Dict, List, Sequence, Tuple

import numpy as np
from spacy.tokens import Doc

from ..pipeline.sentence_ner import sentence_bounds, sentence_docs
from .corpus_scores import score_docs
from .metrics import prf_from_counts

UNITS = ("document", "sentence")


def split_by_sentence(gold_docs: Sequence[Doc], docs: Sequence[Doc]) -> Tuple[List[Doc], List[Doc], List[int]]:
    """Each document cut into its sentences, by the input Doc's sentence
    starts (the data's): (gold sentence Docs, input sentence Docs, the
    document index of each sentence). A gold entity across a sentence end is
    a ValueError (it could not be scored per sentence)."""
    gold_sentences, input_sentences, owners = [], [], []
    for index, (gold, doc) in enumerate(zip(gold_docs, docs)):
        if len(gold) != len(doc):
            raise ValueError(f"document {index}: the gold Doc has {len(gold)} tokens, the input {len(doc)}")
        bounds = sentence_bounds(doc)
        sentence_of = np.repeat(np.arange(len(bounds)), [end - start for start, end in bounds])
        across = [ent for ent in gold.ents if sentence_of[ent.start] != sentence_of[ent.end - 1]]
        if across:
            ent = across[0]
            raise ValueError(
                f"document {index}: gold entity {ent.text!r} ({ent.start}-{ent.end}) crosses a sentence end of the "
                "input's sentence starts: score it by document"
            )
        gold_sentences += sentence_docs(gold, bounds)
        input_sentences += sentence_docs(doc, bounds)
        owners += [index] * len(bounds)
    return gold_sentences, input_sentences, owners


def score_by_unit(nlp, gold_docs: Sequence[Doc], docs: Sequence[Doc], unit: str, batch_size: int = 256) -> Dict:
    """``score_docs`` of ``nlp`` run on whole documents (``unit`` "document")
    or on one Doc per sentence ("sentence"); either way ``sentence_counts``
    holds one (TP, FP, FN) row per document, and ``unit`` says which ran."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, not {unit!r}")
    if unit == "document":
        return {**score_docs(nlp, list(gold_docs), list(docs), batch_size), "unit": unit}
    gold_sentences, input_sentences, owners = split_by_sentence(gold_docs, docs)
    result = score_docs(nlp, gold_sentences, input_sentences, batch_size)
    counts = np.zeros((len(docs), 3), dtype=np.int64)
    np.add.at(counts, np.asarray(owners, dtype=np.int64), np.asarray(result["sentence_counts"], dtype=np.int64))
    overall = prf_from_counts(counts)
    return {
        **result,
        **{key: overall[key] for key in ("p", "r", "f")},
        "sentence_counts": counts.tolist(),
        "unit": unit,
    }
