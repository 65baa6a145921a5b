"""Whole-document corpora for the two-stage model (Krishnan & Manning 2006):
cross-validation folds of documents, and a first stage's predicted entities
attached to the input Docs.

``spacy_depner.UNERDocuments.v1`` reads UD English-EWT + UNER as one Example
per document (``# newdoc id``), sentences marked, and can

- keep the documents of some folds only: documents are dealt round-robin into
  ``folds`` folds (document i is in fold i % folds); ``exclude_fold`` = f
  keeps every document outside fold f (training the first stage of fold f),
  ``only_fold`` = f keeps fold f alone (its held-out predictions);
- put a first stage's entities into ``doc.spans[spans_key]`` of every input
  Doc, from a JSON-lines file of ``first_stage_records`` (the second stage
  reads them through ``spacy_depner.NonLocalFeatures.v1``).
"""
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence

import srsly
from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry

from .uner import DEFAULT_LABELS, DEPENDENCIES, corpus_examples, read_uner_corpus


def fold_indices(n_documents: int, folds: int, exclude_fold: int = -1, only_fold: int = -1) -> List[int]:
    """Indices of the documents kept: all (folds = 0), those outside
    ``exclude_fold``, or those of ``only_fold`` (document i is in fold i % folds)."""
    if folds < 0 or (folds == 0 and (exclude_fold >= 0 or only_fold >= 0)):
        raise ValueError(f"folds must be >= 0, and > 0 to pick a fold (folds={folds})")
    if exclude_fold >= 0 and only_fold >= 0:
        raise ValueError("give exclude_fold or only_fold, not both")
    if folds and max(exclude_fold, only_fold) >= folds:
        raise ValueError(f"fold {max(exclude_fold, only_fold)} does not exist: folds are 0..{folds - 1}")
    if exclude_fold >= 0:
        return [i for i in range(n_documents) if i % folds != exclude_fold]
    if only_fold >= 0:
        return [i for i in range(n_documents) if i % folds == only_fold]
    return list(range(n_documents))


def first_stage_records(docs: Sequence[Doc], ids: Sequence[int]) -> List[Dict]:
    """One JSON-able record per Doc: its document index, its length and the
    first stage's entities (``doc.ents``) as [start, end, label]."""
    return [{"document": int(i), "tokens": len(doc), "entities": [[e.start, e.end, e.label_] for e in doc.ents]}
            for i, doc in zip(ids, docs)]


def attach_first_stage(doc: Doc, record: Dict, spans_key: str) -> None:
    """Put a record's entities into ``doc.spans[spans_key]`` (the record must be of this Doc)."""
    if record["tokens"] != len(doc):
        raise ValueError(f"first-stage record of document {record['document']} has {record['tokens']} tokens, "
                         f"the Doc {len(doc)}: the file was made from another corpus")
    doc.spans[spans_key] = [Span(doc, start, end, label=label) for start, end, label in record["entities"]]


def document_examples(vocab, conllu: Path, iob2: Path, dependencies: str = "given",
                      labels: Sequence[str] = DEFAULT_LABELS, limit: int = 0) -> List[Example]:
    """One Example per document of a CoNLL-U + UNER pair (the first ``limit``, 0: all)."""
    examples = corpus_examples(vocab, read_uner_corpus(conllu, iob2, labels), dependencies, whole_documents=True)
    return examples[:limit] if limit else examples


@registry.readers("spacy_depner.UNERDocuments.v1")
def create_uner_documents_reader(
    conllu: Path,
    iob2: Path,
    dependencies: str = "given",
    labels: List[str] = list(DEFAULT_LABELS),
    folds: int = 0,
    exclude_fold: int = -1,
    only_fold: int = -1,
    first_stage: Optional[Path] = None,
    spans_key: str = "first_stage",
    limit: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Corpus reader for ``spacy train``: one Example per document, optionally
    a subset of folds, optionally with a first stage's entities in the input
    Docs (``first_stage``: a JSON-lines file with a record for each kept
    document). limit: the first N documents only (0: all), before the folds."""
    if dependencies not in DEPENDENCIES:
        raise ValueError(f"dependencies must be 'given' or 'predicted', not {dependencies!r}")
    fold_indices(0, folds, exclude_fold, only_fold)  # checks the fold settings now
    if limit < 0:
        raise ValueError(f"limit must be 0 (all) or positive, not {limit!r}")
    cache: Dict[str, List[Example]] = {}

    def read(nlp: Language) -> Iterable[Example]:
        if "examples" not in cache:
            examples = document_examples(nlp.vocab, conllu, iob2, dependencies, labels, limit)
            kept = fold_indices(len(examples), folds, exclude_fold, only_fold)
            examples = [examples[i] for i in kept]
            if first_stage is not None:
                records = {r["document"]: r for r in srsly.read_jsonl(first_stage)}
                missing = [i for i in kept if i not in records]
                if missing:
                    raise ValueError(f"{first_stage} has no first-stage record for documents {missing[:5]} of {conllu}")
                for i, eg in zip(kept, examples):
                    attach_first_stage(eg.predicted, records[i], spans_key)
            cache["examples"] = examples
        return [Example(eg.predicted.copy(), eg.reference) for eg in cache["examples"]]  # evaluation replaces eg.predicted

    return read
