"""GENIA nested NER from JSON lines, as spaCy Examples with a span group.

One sentence per line (the format of ``../shared/data/genia/README.md``)::

    {"doc_id": ..., "sent_id": ..., "tokens": ["IL-2", "gene", ...],
     "entities": [{"start": 0, "end": 2, "type": "DNA", "text": "IL-2 gene"}, ...]}

``start``/``end`` are token offsets, ``end`` exclusive. Mentions may nest and
may share a span with another type (GENIA has a few such pairs); identical
(start, end, type) triples are kept once. The ``text`` field is not checked:
it is the surface string, not the tokens joined by spaces.

GENIA has no dependency trees: the input Docs hold the words only, and the
reference Docs add the mentions in ``doc.spans[spans_key]`` (``doc.ents`` is
left empty, as mentions overlap). Annotations: CC BY 3.0, "Corpus annotations
(c) GENIA Project" (Kim et al. 2003).
"""

from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from ..doc_arrays.spans import heads_key
from ..util.text_lines import json_lines, readable_file

FlatMention = Tuple[int, int, str]


def _mention(entity, n_words: int, where: str) -> FlatMention:
    if not isinstance(entity, dict):
        raise ValueError(f"{where}: an entity must be an object with start, end and type, got {entity!r}")
    missing = [key for key in ("start", "end", "type") if key not in entity]
    if missing:
        raise ValueError(f"{where}: entity {entity!r} has no {', '.join(missing)}")
    start, end, label = entity["start"], entity["end"], entity["type"]
    if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool) or isinstance(end, bool):
        raise ValueError(f"{where}: entity start and end must be integers, got {start!r}, {end!r}")
    if not 0 <= start < end <= n_words:
        raise ValueError(f"{where}: entity [{start}, {end}) is empty or outside the {n_words} tokens")
    if not isinstance(label, str) or not label:
        raise ValueError(f"{where}: entity type must be a non-empty string, got {label!r}")
    return (start, end, label)


def read_genia(path) -> List[Tuple[List[str], List[FlatMention]]]:
    """Sentences of a GENIA JSON-lines file: (words, mentions); see ``read_genia_records``."""
    return [(words, mentions) for words, mentions, _ in read_genia_records(path)]


def read_genia_records(path) -> List[Tuple[List[str], List[FlatMention], Optional[str]]]:
    """Sentences of a GENIA JSON-lines file: (words, mentions, doc_id or None), mentions as
    (start, end_exclusive, label) sorted by (start, -end, label), without
    duplicates. Blank lines are skipped; a malformed line, a file without
    sentences, and a ``sent_id`` given twice to different tokens are
    ValueErrors naming the file and line. A sentence repeated with its
    sent_id and tokens is kept: the GENIA 3.02 release holds article
    MEDLINE:97218353 twice, annotated differently."""
    path = readable_file(path, "GENIA")
    sentences = []
    sent_ids: Dict[str, Tuple[int, List[str]]] = {}
    for number, where, record in json_lines(path, "GENIA"):
        if isinstance(record, dict) and "text" in record and "tokens" not in record and "entities" not in record:
            raise ValueError(
                f"{where}: a record of plain text (keys {sorted(record)}) has no annotations to score against: "
                "give gold data (a DocBin with doc.ents, CoNLL-U with --iob2, or GENIA JSON lines with 'tokens' "
                "and 'entities'); apply annotates plain text"
            )
        if not isinstance(record, dict) or "tokens" not in record or "entities" not in record:
            raise ValueError(f"{where}: a line must be a JSON object with 'tokens' and 'entities'")
        words, entities = record["tokens"], record["entities"]
        if not isinstance(words, list) or not words or not all(isinstance(w, str) and w for w in words):
            raise ValueError(f"{where}: 'tokens' must be a non-empty list of non-empty strings")
        if not isinstance(entities, list):
            raise ValueError(f"{where}: 'entities' must be a list")
        sent_id = record.get("sent_id")
        if sent_id is not None:
            if not isinstance(sent_id, str):
                raise ValueError(f"{where}: 'sent_id' must be a string, got {sent_id!r}")
            if sent_id in sent_ids and sent_ids[sent_id][1] != words:
                raise ValueError(
                    f"{where}: sent_id {sent_id!r} was already given at line {sent_ids[sent_id][0]} "
                    "to other tokens; every sentence needs its own id (renumber one)"
                )
            sent_ids.setdefault(sent_id, (number, words))
        doc_id = record.get("doc_id")
        if doc_id is not None and not isinstance(doc_id, str):
            raise ValueError(f"{where}: 'doc_id' must be a string, got {doc_id!r}")
        mentions = {_mention(entity, len(words), where) for entity in entities}
        sentences.append((list(words), sorted(mentions, key=lambda m: (m[0], -m[1], m[2])), doc_id))
    if not sentences:
        raise ValueError(
            f"{path}:1: no sentence in the file; a GENIA file has one JSON object per line, "
            "with 'tokens' and 'entities'"
        )
    return sentences


def mentions_to_spans(doc: Doc, mentions: Iterable[Tuple], spans_key: str) -> Doc:
    """Put mentions (start, end_exclusive, label) in ``doc.spans[spans_key]``;
    mentions (start, end, label, head_start, head_end_exclusive) also put their
    heads, in the same order and with the same labels, in
    ``doc.spans[heads_key(spans_key)]``."""
    mentions = list(mentions)
    doc.spans[spans_key] = [Span(doc, m[0], m[1], label=m[2]) for m in mentions]
    if mentions and len(mentions[0]) == 5:
        doc.spans[heads_key(spans_key)] = [Span(doc, m[3], m[4], label=m[2]) for m in mentions]
    return doc


def genia_examples(vocab: Vocab, sentences, spans_key: str = "nested_ner") -> List[Example]:
    """One Example per sentence: the input has the words; the reference the
    words and the mentions in ``doc.spans[spans_key]``."""
    examples = []
    for words, mentions in sentences:
        spaces = [True] * (len(words) - 1) + [False]
        reference = mentions_to_spans(Doc(vocab, words=words, spaces=spaces), mentions, spans_key)
        examples.append(Example(Doc(vocab, words=words, spaces=spaces), reference))
    return examples


@registry.readers("spacy_depner.GENIACorpus.v1")
def create_genia_reader(
    path: Path, limit: int = 0, spans_key: str = "nested_ner"
) -> Callable[[Language], Iterable[Example]]:
    """Corpus reader for ``spacy train``: GENIA sentences, nested mentions in
    ``doc.spans[spans_key]`` of the reference. limit: first N sentences (0: all)."""
    if limit < 0:
        raise ValueError(f"limit must be 0 (all) or positive, not {limit!r}")
    cache: Dict[str, list] = {}

    def read(nlp: Language) -> Iterable[Example]:
        if "sentences" not in cache:
            sentences = read_genia(path)
            cache["sentences"] = sentences[:limit] if limit else sentences
        return genia_examples(nlp.vocab, cache["sentences"], spans_key)

    return read
