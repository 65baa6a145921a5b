"""Nested entity mentions of UD English-GUM (CoNLL-U, ``Entity=`` in MISC).

Licence: GUM is distributed under CC BY-NC-SA 4.0 (Attribution-NonCommercial-
ShareAlike); some source texts carry their own licences. Non-commercial use
only: models trained on it inherit the restriction.

Format (CorefUD brackets, declared by ``# global.Entity = GRP-etype-infstat-
salience-centering-minspan-link-identity``):

* ``(eid-etype-...`` on a word opens a mention of entity ``eid`` there,
  ``eid)`` on a later word closes the most recently opened mention of that
  entity, ``(eid-etype-...)`` is a one-word mention; several brackets can
  follow each other on one word, e.g. ``Entity=(10-abstract-...-coref)36)35)``.
* The label is ``etype``, one of the 10 GUM types (abstract, animal, event,
  object, organization, person, place, plant, substance, time).
* ``minspan`` lists the 1-based positions, inside the mention, of its minimal
  span (``2`` in "The prevalence of ..."; ``2,4`` for "the origins and
  consequences ..."). It is returned as the range (head_start, head_end) from
  the first to the last listed position, end exclusive, in sentence
  coordinates; about half of the lists with several positions are not
  contiguous (e.g. coordinations), for which the range also covers the words
  between (counted in ``GUMStats.minspan_gaps``). A missing or out-of-range
  minspan gives (None, None).
* Discontinuous mentions (``eid[1/2]``) are not used in GUM; if present they
  are skipped and counted.

Mentions are attached to syntactic words (multiword-token lines and empty
nodes carry none; if they do, they are ignored and counted). A mention whose
brackets lie in different sentences cannot be a span of one sentence: it is
skipped in both Example modes and counted in ``GUMStats.cross_sentence``
(GUM has none). Identical (start, end, label) mentions of a sentence (two
entity ids on the same words with the same type) are kept once.
"""

import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry
from spacy.vocab import Vocab

from ..util.text_lines import numbered_lines, readable_file
from .conllu import Sentence, read_conllu, sentences_to_doc
from .genia import mentions_to_spans

GUM_LABELS = ("abstract", "animal", "event", "object", "organization", "person", "place", "plant", "substance", "time")
DEPENDENCIES = ("given", "predicted")
DEFAULT_FIELDS = ("eid", "etype", "infstat", "salience", "centering", "minspan", "link", "identity")
_BRACKET = re.compile(r"\(([^()]+)(\))?|([^()]+)\)")


class Mention(NamedTuple):
    """A mention in sentence coordinates (end exclusive); head_* from minspan or None."""

    start: int
    end: int
    label: str
    head_start: Optional[int]
    head_end: Optional[int]


@dataclass
class GUMSentence:
    sentence: Sentence
    mentions: List[Mention] = field(default_factory=list)


@dataclass
class GUMDocument:
    """A ``# newdoc`` document: a list of sentences with their mentions."""

    doc_id: str
    sentences: List[GUMSentence] = field(default_factory=list)

    def __iter__(self) -> Iterator[GUMSentence]:
        return iter(self.sentences)

    def __len__(self) -> int:
        return len(self.sentences)

    def __getitem__(self, index):
        return self.sentences[index]


@dataclass
class GUMStats:
    """Counts of what the reader read, repaired or skipped."""

    documents: int = 0
    sentences: int = 0
    mentions: int = 0  # kept, after removing duplicates
    duplicates: int = 0  # identical (start, end, label) in a sentence, removed
    cross_sentence: int = 0  # mentions opened and closed in different sentences, skipped
    unclosed: int = 0  # mentions still open at the end of their document, skipped
    discontinuous: int = 0  # bracket pairs of discontinuous mentions, skipped
    ignored_lines: int = 0  # Entity= on multiword-token or empty-node lines
    minspan_missing: int = 0
    minspan_gaps: int = 0
    labels: Dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> Dict:
        return dict(self.__dict__)


@dataclass
class GUMCorpus:
    documents: List[GUMDocument]
    stats: GUMStats


@dataclass
class _Open:
    sentence: int  # index in the document
    start: int
    label: str
    minspan: str
    line: int
    discontinuous: bool


def _fields(value: str, where: str) -> Tuple[str, ...]:
    names = tuple(part.strip() for part in value.strip().split("-"))
    if len(names) < 2:
        raise ValueError(
            f"{where}: cannot read the global.Entity declaration {value!r}; it names the fields of "
            "an entity bracket, e.g. GRP-etype-infstat-salience-centering-minspan-link-identity"
        )
    return ("eid",) + names[1:]  # the first field (GRP, eid, ...) is the entity id


def _head(minspan: str, start: int, end: int, stats: GUMStats) -> Tuple[Optional[int], Optional[int]]:
    try:
        positions = sorted(int(p) for p in minspan.split(","))
    except ValueError:
        positions = []
    if not positions or positions[0] < 1 or start + positions[-1] > end:
        stats.minspan_missing += 1
        return None, None
    if positions != list(range(positions[0], positions[0] + len(positions))):
        stats.minspan_gaps += 1
    return start + positions[0] - 1, start + positions[-1]


class _EntityParser:
    """Bracket state of one document."""

    def __init__(self, path: Path, stats: GUMStats):
        self.path, self.stats = path, stats
        self.fields = DEFAULT_FIELDS
        self.open: Dict[str, List[_Open]] = {}
        self.sentences: List[List[Mention]] = []

    def declare(self, value: str, line: int) -> None:
        self.fields = _fields(value, f"{self.path}:{line}")

    def new_document(self) -> None:
        self.stats.unclosed += sum(len(stack) for stack in self.open.values())
        self.open, self.sentences = {}, []

    def new_sentence(self) -> None:
        self.sentences.append([])

    def _attributes(self, text: str, line: int) -> Tuple[str, str, str]:
        parts = text.split("-")
        if len(parts) < 2:
            raise ValueError(f"{self.path}:{line}: entity bracket {text!r} has no entity type")
        values = dict(zip(self.fields, parts))
        return parts[0], values.get("etype", parts[1]), values.get("minspan", "")

    def _close(self, item: _Open, end: int, line: int) -> None:
        if item.discontinuous:
            self.stats.discontinuous += 1
            return
        current = len(self.sentences) - 1
        if item.sentence != current:
            self.stats.cross_sentence += 1
            return
        head = _head(item.minspan, item.start, end, self.stats)
        self.sentences[current].append(Mention(item.start, end, item.label, *head))

    def word(self, position: int, value: str, line: int) -> None:
        """Brackets of the word at ``position`` (0-based in the sentence)."""
        at = 0
        for match in _BRACKET.finditer(value):
            if match.start() != at:
                break
            at = match.end()
            if match.group(1) is not None:
                eid, label, minspan = self._attributes(match.group(1), line)
                item = _Open(len(self.sentences) - 1, position, label, minspan, line, "[" in eid)
                if match.group(2):
                    self._close(item, position + 1, line)
                else:
                    self.open.setdefault(eid, []).append(item)
            else:
                eid = match.group(3)
                stack = self.open.get(eid)
                if not stack:
                    raise ValueError(f"{self.path}:{line}: 'Entity={value}' closes mention {eid!r}, which is not open")
                self._close(stack.pop(), position + 1, line)
        if at != len(value):
            raise ValueError(f"{self.path}:{line}: cannot read 'Entity={value}' (at character {at})")


def _entity_value(misc: str) -> Optional[str]:
    for item in misc.split("|"):
        if item.startswith("Entity="):
            return item[len("Entity=") :]
    return None


def has_entity_annotation(path) -> bool:
    """Whether the CoNLL-U file at ``path`` carries GUM's entity annotation:
    a ``# global.Entity`` declaration or an ``Entity=`` item in a word's
    MISC column (read up to the first one)."""
    for _, line in numbered_lines(path, "CoNLL-U"):
        if line.startswith("#"):
            if line[1:].partition("=")[0].strip() == "global.Entity":
                return True
            continue
        columns = line.split("\t")
        if len(columns) == 10 and _entity_value(columns[9]) is not None:
            return True
    return False


def _read_mentions(path: Path, stats: GUMStats) -> List[Tuple[str, List[List[Mention]], List[int]]]:
    """(doc_id, mentions of each sentence, word count of each sentence) per document."""
    documents: List[Tuple[str, List[List[Mention]], List[int]]] = []
    parser = _EntityParser(path, stats)
    in_sentence, words = False, 0
    for number, line in numbered_lines(path, "CoNLL-U"):
        if not line.strip():
            if in_sentence and words:
                documents[-1][2].append(words)
            elif in_sentence:
                parser.sentences.pop()
            in_sentence, words = False, 0
            continue
        if line.startswith("#"):
            key, _, value = line[1:].partition("=")
            key = key.strip()
            if key.startswith("newdoc"):
                if in_sentence:  # comments of this sentence came first: move it to the new document
                    parser.sentences.pop()
                    in_sentence = False
                parser.new_document()
                documents.append((value.strip() or key, parser.sentences, []))
            elif key == "global.Entity":
                parser.declare(value, number)
            if not in_sentence:
                in_sentence = True
                if not documents:
                    documents.append((path.name, parser.sentences, []))
                parser.new_sentence()
            continue
        if not in_sentence:
            in_sentence = True
            if not documents:
                documents.append((path.name, parser.sentences, []))
            parser.new_sentence()
        columns = line.split("\t")
        if len(columns) != 10:
            raise ValueError(f"{path}:{number}: a CoNLL-U line has 10 tab-separated columns, this one {len(columns)}")
        value = _entity_value(columns[9])
        if "-" in columns[0] or "." in columns[0]:
            stats.ignored_lines += value is not None
            continue
        if value:
            parser.word(words, value, number)
        words += 1
    if in_sentence and words:
        documents[-1][2].append(words)
    elif in_sentence:
        parser.sentences.pop()
    parser.new_document()
    return documents


def read_gum_corpus(path) -> GUMCorpus:
    """Documents, sentences (``Sentence`` of ``read_conllu``) and mentions of a
    GUM CoNLL-U file, with counts of what was skipped. The file is checked as
    ``read_conllu`` checks it (unique sent_ids, trees, ...) before its Entity
    brackets are read; every fault is a ValueError naming FILE:LINE."""
    path = readable_file(path, "CoNLL-U")
    stats = GUMStats()
    sentences = iter(list(read_conllu(path)))  # the file's structure is checked before the brackets are read
    documents = []
    for doc_id, mentions, lengths in _read_mentions(path, stats):
        document = GUMDocument(doc_id)
        for sentence_mentions, length in zip(mentions, lengths):
            sentence = next(sentences, None)
            if sentence is None or len(sentence.words) != length:
                raise ValueError(
                    f"{path}:{sentence.line if sentence else 1}: the sentences of the file could not be "
                    "aligned with its Entity brackets"
                )
            kept: Dict[Tuple[int, int, str], Mention] = {}
            for mention in sentence_mentions:
                key = (mention.start, mention.end, mention.label)
                if key in kept:
                    stats.duplicates += 1
                else:
                    kept[key] = mention
            ordered = sorted(kept.values(), key=lambda m: (m.start, -m.end, m.label))
            for mention in ordered:
                stats.labels[mention.label] = stats.labels.get(mention.label, 0) + 1
            stats.mentions += len(ordered)
            document.sentences.append(GUMSentence(sentence, ordered))
        if document.sentences:
            documents.append(document)
    left = next(sentences, None)
    if left is not None:
        raise ValueError(f"{path}:{left.line}: the sentences of the file could not be aligned with its Entity brackets")
    stats.documents = len(documents)
    stats.sentences = sum(len(d) for d in documents)
    stats.labels = dict(sorted(stats.labels.items()))
    skipped = stats.cross_sentence + stats.unclosed + stats.discontinuous
    if skipped:
        warnings.warn(
            f"{path}: skipped {stats.cross_sentence} mentions crossing a sentence boundary, "
            f"{stats.unclosed} left open and {stats.discontinuous} discontinuous bracket pairs"
        )
    return GUMCorpus(documents, stats)


def read_gum(path) -> List[GUMDocument]:
    """Documents of a GUM CoNLL-U file; each is a list of ``GUMSentence``
    (``.sentence``: the ``Sentence``; ``.mentions``: ``Mention`` tuples
    (start, end_exclusive, label, head_start, head_end_exclusive))."""
    return read_gum_corpus(path).documents


def _doc(vocab: Vocab, sentences: List[GUMSentence], with_trees: bool, with_tags: bool):
    return sentences_to_doc(vocab, [s.sentence for s in sentences], with_trees=with_trees, with_tags=with_tags)


def gum_example(
    vocab: Vocab, sentences: List[GUMSentence], dependencies: str, spans_key: str = "nested_ner"
) -> Example:
    """One Example of one or more sentences. The reference has the trees, tags
    and the mentions in ``doc.spans[spans_key]`` (their heads, from minspan,
    in ``doc.spans[spans_key + "_heads"]``); the input has the words, and
    the gold trees with ``dependencies="given"``. Sentences of several are
    marked in the input also without trees (gold segmentation)."""
    if dependencies not in DEPENDENCIES:
        raise ValueError(f"dependencies must be 'given' or 'predicted', not {dependencies!r}")
    mentions, offset = [], 0
    for s in sentences:
        for m in s.mentions:  # a mention without a minspan takes its last word as its head
            head = (m.head_start, m.head_end) if m.head_start is not None else (m.end - 1, m.end)
            mentions.append((m.start + offset, m.end + offset, m.label, head[0] + offset, head[1] + offset))
        offset += len(s.sentence.words)
    reference = mentions_to_spans(_doc(vocab, sentences, True, True), mentions, spans_key)
    return Example(_doc(vocab, sentences, dependencies == "given", False), reference)


def gum_examples(
    vocab: Vocab,
    documents: List[GUMDocument],
    dependencies: str,
    spans_key: str = "nested_ner",
    whole_documents: bool = False,
    limit: int = 0,
) -> List[Example]:
    """One Example per sentence, or per document with ``whole_documents``;
    ``limit``: first N Examples (0: all)."""
    groups = [d.sentences for d in documents] if whole_documents else [[s] for d in documents for s in d]
    if limit:
        groups = groups[:limit]
    return [gum_example(vocab, group, dependencies, spans_key) for group in groups]


@registry.readers("spacy_depner.GUMCorpus.v1")
def create_gum_reader(
    path: Path,
    dependencies: str = "given",
    limit: int = 0,
    spans_key: str = "nested_ner",
    whole_documents: bool = False,
) -> Callable[[Language], Iterable[Example]]:
    """Corpus reader for ``spacy train``: GUM trees + nested mentions in
    ``doc.spans[spans_key]``. dependencies: "given" puts the gold trees in the
    input Docs; "predicted" leaves them to a parser. whole_documents: one
    Example per document instead of per sentence. limit: first N Examples
    (0: all). GUM is CC BY-NC-SA 4.0: non-commercial use only."""
    if dependencies not in DEPENDENCIES:
        raise ValueError(f"dependencies must be 'given' or 'predicted', not {dependencies!r}")
    if limit < 0:
        raise ValueError(f"limit must be 0 (all) or positive, not {limit!r}")
    cache: Dict[str, List[GUMDocument]] = {}

    def read(nlp: Language) -> Iterable[Example]:
        if "documents" not in cache:
            cache["documents"] = read_gum(path)
        return gum_examples(nlp.vocab, cache["documents"], dependencies, spans_key, whole_documents, limit)

    return read
