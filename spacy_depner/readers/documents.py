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
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry

from ..ml.nonlocal_features import votes_key_of
from ..pipeline.span_groups import write_span_group
from ..util.text_lines import json_lines
from .conllu import sentences_to_doc
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


def first_stage_records(
    docs: Sequence[Doc], ids: Sequence[int], votes: Optional[Sequence[Sequence[Tuple]]] = None
) -> List[Dict]:
    """One JSON-able record per Doc: its document index, its length and the
    first stage's entities (``doc.ents``) as [start, end, label]; with
    ``votes`` (per Doc, (start, end, label, probability) tuples: the first
    stage's soft votes), also "votes": [[start, end, label, probability], ...]."""
    records = [
        {"document": int(i), "tokens": len(doc), "entities": [[e.start, e.end, e.label_] for e in doc.ents]}
        for i, doc in zip(ids, docs)
    ]
    for record, doc_votes in zip(records, votes if votes is not None else []):
        record["votes"] = [[int(s), int(e), label, round(float(p), 6)] for s, e, label, p in doc_votes]
    return records


def attach_first_stage(doc: Doc, record: Dict, spans_key: str, where: str = "first-stage record") -> None:
    """Put a record's entities into ``doc.spans[spans_key]`` (the record must
    be of this Doc; ``where`` names it in errors, e.g. FILE:LINE)."""
    if record["tokens"] != len(doc):
        raise ValueError(
            f"{where}: the record of document {record['document']} has {record['tokens']} tokens, "
            f"the Doc {len(doc)}: the file was made from another corpus"
        )
    for key, item in (("entities", "entity"), ("votes", "vote")):
        outside = [span for span in record.get(key, []) if not 0 <= span[0] < span[1] <= len(doc)]
        if outside:
            raise ValueError(
                f"{where}: {item} {outside[0]} of document {record['document']} is empty or outside its "
                f"{len(doc)} tokens"
            )
    doc.spans[spans_key] = [Span(doc, start, end, label=label) for start, end, label in record["entities"]]
    if "votes" in record:
        write_span_group(
            doc,
            votes_key_of(spans_key),
            [Span(doc, start, end, label=label) for start, end, label, _ in record["votes"]],
            [p for *_, p in record["votes"]],
        )


def read_first_stage(path) -> Dict[int, Tuple[str, Dict]]:
    """The ``first_stage_records`` of a JSON-lines file by document index,
    each with its FILE:LINE; a malformed record, or a document given twice,
    is a ValueError naming the line."""
    records: Dict[int, Tuple[str, Dict]] = {}
    for _, where, record in json_lines(path, "first-stage"):
        entities = record.get("entities") if isinstance(record, dict) else None
        if (
            not isinstance(entities, list)
            or not all(_integer(record.get(key)) for key in ("document", "tokens"))
            or not all(
                isinstance(e, list)
                and len(e) == 3
                and _integer(e[0])
                and _integer(e[1])
                and isinstance(e[2], str)
                and e[2]
                for e in entities
            )
        ):
            raise ValueError(
                f'{where}: a first-stage record is {{"document": int, "tokens": int, "entities": '
                f"[[start, end, label], ...]}}, got {record!r}; write the file with first_stage_records"
            )
        votes = record.get("votes", [])
        if not isinstance(votes, list) or not all(
            isinstance(v, list)
            and len(v) == 4
            and _integer(v[0])
            and _integer(v[1])
            and isinstance(v[2], str)
            and v[2]
            and isinstance(v[3], (int, float))
            and not isinstance(v[3], bool)
            and 0 <= v[3] <= 1
            for v in votes
        ):
            raise ValueError(
                f"{where}: the votes of a first-stage record are [[start, end, label, probability in [0, 1]], ...], "
                f"got {votes!r}; write the file with first_stage_records"
            )
        if record["document"] in records:
            raise ValueError(
                f"{where}: document {record['document']} has a record already at "
                f"{records[record['document']][0]}; give each document one record"
            )
        records[record["document"]] = (where, record)
    return records


def _integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


EXTENTS = ("mention", "minspan")  # what a GUM reference entity covers (gum_named_examples)


def document_examples(
    vocab, conllu: Path, iob2: Path, dependencies: str = "given", labels: Sequence[str] = DEFAULT_LABELS, limit: int = 0
) -> List[Example]:
    """One Example per document of a CoNLL-U + UNER pair (the first ``limit``, 0: all)."""
    examples = corpus_examples(vocab, read_uner_corpus(conllu, iob2, labels), dependencies, whole_documents=True)
    return examples[:limit] if limit else examples


def gum_named_examples(
    vocab, path: Path, dependencies: str = "given", limit: int = 0, extent: str = "mention"
) -> List[Example]:
    """One Example per UD English-GUM document (the first ``limit``, 0: all)
    whose reference entities (``doc.ents``) are GUM's *named* mentions: those
    whose head (minspan) holds a proper noun (UPOS PROPN), labelled with their
    entity type; of nested named mentions only the outermost is kept (an
    entity of ``doc.ents`` cannot hold another). ``extent`` is what a
    reference entity covers: "mention", the whole mention as GUM brackets it
    (determiners, modifiers, appositions and relative clauses included: "the
    Berlin music critic Louis Ehlert"), or "minspan", its minimal span ("the
    Western United States" -> "Western United States"; a mention without one
    keeps its whole extent). The input has the words, the sentence starts and,
    with ``dependencies="given"``, the gold trees."""
    from .gum import _doc, read_gum

    if dependencies not in DEPENDENCIES:
        raise ValueError(f"dependencies must be 'given' or 'predicted', not {dependencies!r}")
    if extent not in EXTENTS:
        raise ValueError(f"extent must be one of {', '.join(map(repr, EXTENTS))}, not {extent!r}")
    documents = read_gum(path)
    examples = []
    for document in documents[:limit] if limit else documents:
        sentences = list(document)
        named, offset = [], 0
        for s in sentences:
            for m in s.mentions:
                minimal = m.head_start is not None
                head = range(m.head_start, m.head_end) if minimal else range(m.end - 1, m.end)
                if any(s.sentence.upos[h] == "PROPN" for h in head):
                    start, end = (m.head_start, m.head_end) if extent == "minspan" and minimal else (m.start, m.end)
                    named.append((start + offset, end + offset, m.label))
            offset += len(s.sentence.words)
        tags = ["O"] * offset
        for start, end, label in outermost(named):
            tags[start:end] = [f"B-{label}"] + [f"I-{label}"] * (end - start - 1)
        reference = sentences_to_doc(vocab, [s.sentence for s in sentences], with_trees=True, with_tags=True, ents=tags)
        examples.append(Example(_doc(vocab, sentences, dependencies == "given", False), reference))
    return examples


def outermost(mentions: Iterable[Tuple[int, int, str]]) -> List[Tuple[int, int, str]]:
    """The mentions (start, end_exclusive, label) for ``doc.ents``, in order:
    sorted by (start, -end), stable, a mention is kept unless it overlaps one
    kept before it; so of nested mentions only the outermost is kept (an
    entity of ``doc.ents`` cannot hold another), and of mentions of the same
    tokens the first given."""
    kept: List[Tuple[int, int, str]] = []
    covered_until = 0
    for start, end, label in sorted(mentions, key=lambda m: (m[0], -m[1])):
        if start >= covered_until:
            kept.append((start, end, label))
            covered_until = end
    return kept


def genia_abstract_examples(vocab, path: Path, limit: int = 0) -> List[Example]:
    """One Example per GENIA abstract (a run of sentences with the same
    ``doc_id``; the first ``limit``, 0: all) for a flat task: the reference's
    ``doc.ents`` are the outermost mentions of each sentence (``outermost``),
    with their five types. Both Docs have the words and the sentence starts;
    GENIA has no trees. A sentence without ``doc_id`` is a ValueError: the
    document features need the abstracts."""
    from .genia import read_genia_records

    records = read_genia_records(path)
    missing = next((i for i, record in enumerate(records) if record[2] is None), None)
    if missing is not None:
        raise ValueError(
            f"{path}: sentence {missing + 1} has no 'doc_id'; whole abstracts need every sentence's doc_id "
            "(read sentences with spacy_depner.GENIACorpus.v1 instead)"
        )
    abstracts: List[List[Tuple[List[str], List[Tuple[int, int, str]]]]] = []
    previous = None
    for words, mentions, doc_id in records:
        if doc_id != previous:
            if limit and len(abstracts) == limit:
                break
            abstracts.append([])
            previous = doc_id
        abstracts[-1].append((words, mentions))
    examples = []
    for sentences in abstracts:
        words = [w for sentence, _ in sentences for w in sentence]
        starts = [i == 0 for sentence, _ in sentences for i in range(len(sentence))]
        tags, offset = ["O"] * len(words), 0
        for sentence, mentions in sentences:
            for start, end, label in outermost(mentions):
                tags[offset + start : offset + end] = [f"B-{label}"] + [f"I-{label}"] * (end - start - 1)
            offset += len(sentence)
        spaces = [True] * (len(words) - 1) + [False]
        reference = Doc(vocab, words=words, spaces=spaces, sent_starts=starts, ents=tags)
        examples.append(Example(Doc(vocab, words=words, spaces=spaces, sent_starts=starts), reference))
    return examples


def documents_reader(
    load: Callable[[Language], List[Example]],
    source: str,
    dependencies: str,
    limit: int,
    folds: int,
    exclude_fold: int,
    only_fold: int,
    first_stage: Optional[Path],
    spans_key: str,
    sentences: bool = False,
) -> Callable[[Language], Iterable[Example]]:
    """A reader over the documents ``load`` gives (once): the kept folds, with
    the first stage's entities of ``first_stage`` in the input Docs; with
    ``sentences``, one Example per sentence of those documents instead
    (``sentence_examples``). The settings are checked now, before any file is read."""
    if dependencies not in DEPENDENCIES:
        raise ValueError(f"dependencies must be 'given' or 'predicted', not {dependencies!r}")
    if limit < 0:
        raise ValueError(f"limit must be 0 (all) or positive, not {limit!r}")
    fold_indices(0, folds, exclude_fold, only_fold)
    cache: Dict[str, List[Example]] = {}

    def read(nlp: Language) -> Iterable[Example]:
        if "examples" not in cache:
            examples = load(nlp)
            kept = fold_indices(len(examples), folds, exclude_fold, only_fold)
            examples = [examples[i] for i in kept]
            if first_stage is not None:
                records = read_first_stage(first_stage)
                missing = [i for i in kept if i not in records]
                if missing:
                    raise ValueError(f"{first_stage} has no first-stage record for documents {missing[:5]} of {source}")
                for i, eg in zip(kept, examples):
                    attach_first_stage(eg.predicted, records[i][1], spans_key, records[i][0])
            cache["examples"] = [s for eg in examples for s in sentence_examples(eg)] if sentences else examples
        return [
            Example(eg.predicted.copy(), eg.reference) for eg in cache["examples"]
        ]  # evaluation replaces eg.predicted

    return read


def sentence_examples(example: Example) -> List[Example]:
    """One Example per sentence of the reference Doc (its ``sents``): both Docs
    cut at the same tokens, their trees and entities kept, and the input's
    span groups (a first stage's entities) cut with them; a span across a
    sentence boundary is refused."""
    examples = []
    for sentence in example.reference.sents:
        start, end = sentence.start, sentence.end
        predicted = example.predicted[start:end].as_doc()
        for key, group in example.predicted.spans.items():
            across = [
                span
                for span in group
                if span.start < end and span.end > start and not (span.start >= start and span.end <= end)
            ]
            if across:
                raise ValueError(
                    f"span {across[0].text!r} ({across[0].start}-{across[0].end}) of doc.spans[{key!r}] crosses a "
                    f"sentence boundary at token {start if across[0].start < start else end}: it cannot be cut into "
                    "sentences; read whole documents (sentences = false)"
                )
            predicted.spans[key] = [
                Span(predicted, span.start - start, span.end - start, span.label_)
                for span in group
                if span.start >= start and span.end <= end
            ]
        examples.append(Example(predicted, example.reference[start:end].as_doc()))
    return examples


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
    sentences: bool = False,
) -> Callable[[Language], Iterable[Example]]:
    """Corpus reader for ``spacy train``: one Example per document, optionally
    a subset of folds, optionally with a first stage's entities in the input
    Docs (``first_stage``: a JSON-lines file with a record for each kept
    document). limit: the first N documents only (0: all), before the folds.
    sentences: one Example per sentence of the kept documents (folds stay
    folds of documents)."""
    return documents_reader(
        lambda nlp: document_examples(nlp.vocab, conllu, iob2, dependencies, labels, limit),
        str(conllu),
        dependencies,
        limit,
        folds,
        exclude_fold,
        only_fold,
        first_stage,
        spans_key,
        sentences,
    )


@registry.readers("spacy_depner.GUMNamedDocuments.v1")
def create_gum_named_documents_reader(
    path: Path,
    dependencies: str = "given",
    folds: int = 0,
    exclude_fold: int = -1,
    only_fold: int = -1,
    first_stage: Optional[Path] = None,
    spans_key: str = "first_stage",
    limit: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Corpus reader for ``spacy train``: one Example per GUM document, its
    named mentions as ``doc.ents`` (``gum_named_examples``), with the folds
    and first-stage options of ``spacy_depner.UNERDocuments.v1``."""
    return documents_reader(
        lambda nlp: gum_named_examples(nlp.vocab, path, dependencies, limit),
        str(path),
        dependencies,
        limit,
        folds,
        exclude_fold,
        only_fold,
        first_stage,
        spans_key,
    )


@registry.readers("spacy_depner.GENIADocuments.v1")
def create_genia_documents_reader(
    path: Path,
    folds: int = 0,
    exclude_fold: int = -1,
    only_fold: int = -1,
    first_stage: Optional[Path] = None,
    spans_key: str = "first_stage",
    limit: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Corpus reader for ``spacy train``: one Example per GENIA abstract, its
    outermost mentions as ``doc.ents`` (``genia_abstract_examples``), with
    the folds and first-stage options of ``spacy_depner.UNERDocuments.v1``.
    GENIA has no trees: a pipeline that needs them parses the text."""
    return documents_reader(
        lambda nlp: genia_abstract_examples(nlp.vocab, path, limit),
        str(path),
        "predicted",
        limit,
        folds,
        exclude_fold,
        only_fold,
        first_stage,
        spans_key,
    )
