"""Non-local majority features of the two-stage model (Krishnan & Manning 2006).

A first-stage NER labels a whole document (and a whole corpus); the second
stage gets, for every token, the *majority labels* that the first stage gave to
other occurrences of the same (or of a containing) token sequence. Pure
Python/numpy: no spaCy here (``spacy_depner.ml.nonlocal_features`` adapts Docs).

Inputs. A *document* is ``(tokens, spans)``: ``tokens`` its token texts
(List[str], n tokens) and ``spans`` the first stage's entities as
``(start, end_exclusive, label)`` tuples in token positions. Labels are
strings; ``labels`` (K strings) fixes the feature values: 0 means "no
feature" (nothing to count, or the majority is the outside label O), and
``1 + k`` means ``labels[k]``. Labels of spans that are not in ``labels`` are
not counted. Every comparison of token sequences ignores case (the texts are
lowercased with ``str.lower``), as the paper does (sec. 4: "while deciding if
token sequences are equal or hold a subsequence-supersequence relation, we
ignore case").

The six features (sec. 4, "Our features fired based on document and corpus
level statistics"), each computed from the first-stage output of the document
(columns 0-2) and of the corpus (columns 3-5):

- **token-majority** (columns 0, 3): the majority first-stage label of the
  token's lowercased text over all its occurrences. Each occurrence votes for
  the label of the entity covering it, or for O when no entity covers it (an
  occurrence inside several overlapping entities votes once for each distinct
  label). The value is the same for every occurrence of the text: with three
  occurrences of "Australia", two inside LOC entities and one inside an ORG
  entity, all three get LOC. A majority of O gives 0.
- **entity-majority** (columns 1, 4): for a token inside a first-stage entity
  (an "entity sequence": a token sequence labelled as a single entity), the
  majority label of all occurrences of that entity's lowercased token sequence
  *as an entity*; every token of the entity gets it (two "Bank of Australia"
  ORG and one LOC: ORG for all tokens of all three). For a token outside every
  entity, the majority label of its lowercased text as a *single-token*
  entity; 0 if it never is one.
- **superentity-majority** (columns 2, 5): for a token inside an entity x,
  the majority label of the entities that *strictly contain* x's token
  sequence ("entity supersequences": entity sequences that strictly contain
  another entity sequence within their span; containment is of contiguous
  lowercased token sequences, x != y). Every token of x gets it; 0 if no
  entity contains x. Each entity occurrence votes once, even when x occurs in
  it twice. Example: two "Bank of Australia" ORG and one "Australia Cup" MISC
  give ORG to every entity "Australia". For a token outside every entity, the
  majority label of all entities *containing the token* in their span (any
  entity whose lowercased tokens include the token's text, single-token
  entities included): "york" O beside two "New York" LOC and one
  "New York Knicks" ORG gets LOC.

The paper's text of the superentity paragraph is the published one (ACL 2006,
sec. 4); the copy in ``papers/`` is cut before it.

Overlapping first-stage entities (nested output). Token-majority counts every
covering label; for the entity and superentity features a token takes the
*longest* entity covering it (ties: the one that starts first). With flat
first-stage output (``doc.ents``) this never arises.

Soft votes. A first stage that has exact marginals (one of this package's
components) can vote with them: ``votes`` are spans ``(start, end_exclusive,
label, p)``, every mention the first stage considers with its marginal
probability p (those above a floor), and the counts add p where a hard vote
adds 1, so an occurrence the first stage missed still votes with what the
model believed. An occurrence's token votes go to each label with the
probability that an entity of that label covers it (the sum of its covering
votes' p, at most 1), and to O with the rest. The features of a token are
still read from the first stage's entities (which entity holds it); only the
counts change. Hard votes are votes of p = 1 on the entities: the same counts.

Ties (any feature): the value that comes first in ``[O] + labels`` wins, i.e.
the label first in the label list, and O (value 0) before any label for the
token-majority feature. The result does not depend on the order of documents,
spans or dict iteration.

Corpus level. ``CorpusStatistics`` holds the same counts over many documents
(plain dicts: lowercased token -> label -> count, entity string -> label ->
count, contained sequence -> label -> count), so the corpus columns of a
document are read from it. The paper's corpus is the one being labelled (the
training corpus, with cross-validated first-stage predictions, for training;
the test corpus for testing), so ``update`` it with the documents being
processed before computing their features; the document itself is then part
of its corpus, as in the paper. The counts serialize with
``to_dict``/``from_dict`` (JSON and msgpack safe). Their size grows with the
square of the entity lengths (every contiguous part of every entity is a key),
which is small for flat NER corpora.
"""

from typing import Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

Span = Tuple[int, int, str]
Vote = Tuple[int, int, str, float]  # a span and its weight (soft votes: its marginal probability)
Counts = Dict[str, Dict[str, float]]

N_FEATURES = 6
# The outside label (O) in the token counts: no spaCy label is the empty string.
OUTSIDE = ""
# Joins lowercased tokens into the key of a token sequence (tokens may contain spaces).
KEY_SEPARATOR = "\x1f"
STATISTICS_VERSION = 1


class Words(NamedTuple):
    """A document's tokens as ids into its distinct lowercased texts:
    ``vocabulary[ids[i]]`` is token i lowercased."""

    ids: np.ndarray  # (n,) int64
    vocabulary: List[str]  # distinct lowercased texts

    @classmethod
    def from_types(cls, types: Sequence[str], type_ids: np.ndarray) -> "Words":
        """Tokens ``types[type_ids[i]]`` (types need not be distinct once lowercased)."""
        lowered = np.array([text.lower() for text in types], dtype=object)  # one step per distinct text
        vocabulary, inverse = np.unique(lowered, return_inverse=True)
        return cls(inverse.reshape(-1)[np.asarray(type_ids, dtype=np.int64)], vocabulary.tolist())

    @classmethod
    def from_tokens(cls, tokens: Union[Sequence[str], "Words"]) -> "Words":
        """The Words of a list of token texts (Words are returned as they are)."""
        if isinstance(tokens, Words):
            return tokens
        types, type_ids = np.unique(np.array(list(tokens), dtype=object), return_inverse=True)
        return cls.from_types(types.tolist(), type_ids.reshape(-1))

    def lowered(self) -> np.ndarray:
        """(n,) object array of the lowercased token texts."""
        return np.array(self.vocabulary, dtype=object)[self.ids] if len(self.ids) else np.zeros(0, dtype=object)


# A document: its token texts (or their Words), the first stage's entities, and optionally its soft votes.
Document = Union[
    Tuple[Union[Sequence[str], Words], Sequence[Span]],
    Tuple[Union[Sequence[str], Words], Sequence[Span], Optional[Sequence[Vote]]],
]


def sequence_key(lowercased_tokens: Sequence[str]) -> str:
    """The key of a token sequence in the entity and superentity counts."""
    return KEY_SEPARATOR.join(lowercased_tokens)


def _check_spans(spans: Sequence[Span], n_tokens: int) -> List[Span]:
    checked = []
    for span in spans:
        try:
            start, end, label = span
        except (TypeError, ValueError):
            raise ValueError(f"A first-stage span is (start, end_exclusive, label), not {span!r}") from None
        start, end = int(start), int(end)
        if not 0 <= start < end <= n_tokens:
            raise ValueError(
                f"First-stage span {span!r} is not inside a document of {n_tokens} tokens "
                "(need 0 <= start < end_exclusive <= number of tokens)"
            )
        if not isinstance(label, str) or label == OUTSIDE:
            raise ValueError(f"First-stage span {span!r}: the label must be a non-empty string")
        checked.append((start, end, label))
    return checked


def _check_votes(votes: Sequence[Vote], n_tokens: int) -> List[Vote]:
    checked = []
    for vote in votes:
        try:
            start, end, label, weight = vote
        except (TypeError, ValueError):
            raise ValueError(
                f"A first-stage vote is (start, end_exclusive, label, probability), not {vote!r}"
            ) from None
        (start, end, label), weight = _check_spans([(start, end, label)], n_tokens)[0], float(weight)
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"First-stage vote {vote!r}: its probability must lie in [0, 1]")
        checked.append((start, end, label, weight))
    return checked


def _add(counts: Counts, key: str, label: str, count: float = 1) -> None:
    by_label = counts.get(key)
    if by_label is None:
        counts[key] = {label: count}
    else:
        by_label[label] = by_label.get(label, 0) + count


def count_document(
    words: Words, spans: Sequence[Span], votes: Optional[Sequence[Vote]] = None
) -> Tuple[Counts, Counts, Counts]:
    """The first-stage label counts of one document (its Words, checked
    spans; or, given, its checked soft ``votes``, whose weights are added
    where a span adds 1: see the module docstring).

    Returns ``(tokens, entities, superentities)``:
        tokens: lowercased token -> label (``OUTSIDE`` for O) -> occurrences
        entities: ``sequence_key`` of an entity -> label -> occurrences as an entity
        superentities: ``sequence_key`` of a sequence -> label -> number of entity
            occurrences that strictly contain it (each entity counts once per
            distinct contained sequence)
    """
    lowered = words.lowered()
    entities: Counts = {}
    superentities: Counts = {}
    hard = votes is None
    weighted = [(start, end, label, 1) for start, end, label in spans] if hard else votes
    # Column 0: O; column 1 + k: the k-th distinct label of the votes.
    columns = [OUTSIDE] + sorted({vote[2] for vote in weighted})
    column_of = {label: k for k, label in enumerate(columns)}
    covered = np.zeros((len(lowered), len(columns)), dtype=np.float64)
    for start, end, label, weight in weighted:
        if weight <= 0:
            continue
        words_of_span = lowered[start:end].tolist()
        _add(entities, sequence_key(words_of_span), label, weight)
        length = end - start
        contained = {
            sequence_key(words_of_span[i:j]) for i in range(length) for j in range(i + 1, length + 1) if j - i < length
        }
        for key in contained:
            _add(superentities, key, label, weight)
        covered[start:end, column_of[label]] += weight
    # Every position votes at most once per covering label (hard: once per distinct label), O with the rest.
    np.minimum(covered, 1.0, out=covered)
    covered[:, 0] = np.maximum(0.0, 1.0 - covered[:, 1:].sum(axis=1))
    positions, voted = np.nonzero(covered)
    pairs, inverse = np.unique(words.ids[positions] * len(columns) + voted, return_inverse=True)
    totals = np.bincount(inverse.reshape(-1), weights=covered[positions, voted], minlength=len(pairs))
    tokens: Counts = {}
    for pair, count in zip(pairs.tolist(), totals.tolist()):  # one step per distinct (text, label)
        _add(
            tokens,
            words.vocabulary[pair // len(columns)],
            columns[pair % len(columns)],
            round(count) if hard else count,
        )
    return tokens, entities, superentities


def _merge(into: Counts, counts: Mapping[str, Mapping[str, int]]) -> None:
    for key, by_label in counts.items():
        for label, count in by_label.items():
            _add(into, key, label, count)


def majority(by_label: Optional[Mapping[str, int]], label_index: Mapping[str, int], with_outside: bool = False) -> int:
    """The feature value of a label count: 1 + the index of the most frequent
    label, 0 for none. with_outside: the ``OUTSIDE`` count competes as value 0.
    Ties go to the value first in ``[O] + labels``; unknown labels are ignored."""
    if not by_label:
        return 0
    best_value, best_count = 0, (by_label.get(OUTSIDE, 0) if with_outside else 0)
    for label, count in by_label.items():
        value = label_index.get(label, 0)
        if value == 0 or count <= 0:
            continue
        if count > best_count or (count == best_count and best_value != 0 and value < best_value):
            best_value, best_count = value, count
    return best_value


def _covering_spans(spans: Sequence[Span], n_tokens: int) -> np.ndarray:
    """(n_tokens,) index into ``spans`` of the longest span covering each token
    (ties: the earliest start), -1 outside every span."""
    chosen = np.full(n_tokens, -1, dtype=np.int64)
    # Shorter first, and among equal lengths later starts first: the last write wins.
    order = sorted(range(len(spans)), key=lambda k: (spans[k][1] - spans[k][0], -spans[k][0]))
    for k in order:
        start, end, _ = spans[k]
        chosen[start:end] = k
    return chosen


def majority_columns(
    words: Words,
    spans: Sequence[Span],
    chosen: np.ndarray,
    counts: Tuple[Mapping, Mapping, Mapping],
    label_index: Mapping[str, int],
) -> np.ndarray:
    """(n_tokens, 3) int32: token-, entity- and superentity-majority values of
    a document's tokens read from ``counts`` (document or corpus counts, as
    returned by ``count_document``); ``chosen`` from ``_covering_spans``."""
    token_counts, entity_counts, superentity_counts = counts
    ids, vocabulary = words
    out = np.zeros((len(ids), 3), dtype=np.int32)
    if len(ids) == 0:
        return out
    # One value per distinct lowercased text, gathered for every token.
    token_values = np.array(
        [majority(token_counts.get(word), label_index, with_outside=True) for word in vocabulary], dtype=np.int32
    )
    out[:, 0] = token_values[ids]
    # Tokens inside an entity: the values of the entity's sequence.
    lowered = words.lowered()
    span_values = np.zeros((max(len(spans), 1), 2), dtype=np.int32)
    for k, (start, end, _) in enumerate(spans):
        key = sequence_key(lowered[start:end].tolist())
        span_values[k, 0] = majority(entity_counts.get(key), label_index)
        span_values[k, 1] = majority(superentity_counts.get(key), label_index)
    inside = chosen >= 0
    out[inside, 1:] = span_values[chosen[inside]]
    # Tokens outside every entity: the token as a single-token entity, and every
    # entity containing it (strict supersequences plus the single-token entity),
    # one value per distinct text outside entities.
    outside = ~inside
    outside_values = np.zeros((len(vocabulary), 2), dtype=np.int32)
    for word_id in np.unique(ids[outside]).tolist():
        word = vocabulary[word_id]
        as_entity = entity_counts.get(word)
        containing: Dict[str, int] = dict(superentity_counts.get(word) or {})
        for label, count in (as_entity or {}).items():
            containing[label] = containing.get(label, 0) + count
        outside_values[word_id] = majority(as_entity, label_index), majority(containing, label_index)
    out[outside, 1:] = outside_values[ids[outside]]
    return out


class CorpusStatistics:
    """First-stage label counts over a corpus, for the corpus-level features.

    ``tokens``: lowercased token -> label -> occurrences (``OUTSIDE``, the
    empty string, for O); ``entities``: entity sequence key -> label ->
    occurrences as an entity; ``superentities``: sequence key -> label ->
    entity occurrences strictly containing it. Keys of sequences are
    ``sequence_key`` of the lowercased tokens. See the module docstring.
    """

    def __init__(self, documents: Iterable[Document] = ()):
        self.tokens: Counts = {}
        self.entities: Counts = {}
        self.superentities: Counts = {}
        self.n_documents = 0
        self.update(documents)

    def update(self, documents: Iterable[Document]) -> "CorpusStatistics":
        """Add the counts of ``documents`` (``(tokens, spans)`` pairs, or
        ``(tokens, spans, votes)`` with soft votes or None), e.g. of the
        corpus about to be processed. Returns self."""
        for tokens, spans, *votes in documents:
            words = Words.from_tokens(tokens)
            n = len(words.ids)
            soft = votes[0] if votes else None
            counts = count_document(words, _check_spans(spans, n), None if soft is None else _check_votes(soft, n))
            for into, added in zip((self.tokens, self.entities, self.superentities), counts):
                _merge(into, added)
            self.n_documents += 1
        return self

    @property
    def counts(self) -> Tuple[Counts, Counts, Counts]:
        return self.tokens, self.entities, self.superentities

    def to_dict(self) -> Dict:
        """Plain dicts of str keys and counts, int (hard votes) or float (soft votes) (JSON / msgpack safe)."""
        return {
            "version": STATISTICS_VERSION,
            "n_documents": self.n_documents,
            "tokens": {key: dict(value) for key, value in self.tokens.items()},
            "entities": {key: dict(value) for key, value in self.entities.items()},
            "superentities": {key: dict(value) for key, value in self.superentities.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping, copy: bool = True) -> "CorpusStatistics":
        """The statistics of ``to_dict``. copy=False shares the nested dicts of
        ``data`` (no copy, for read-only use on large statistics)."""
        if not isinstance(data, Mapping) or data.get("version") != STATISTICS_VERSION:
            found = data.get("version") if isinstance(data, Mapping) else type(data).__name__
            raise ValueError(
                f"Corpus statistics must be a dict from CorpusStatistics.to_dict (version "
                f"{STATISTICS_VERSION}), got version {found!r}"
            )
        missing = [name for name in ("tokens", "entities", "superentities") if not isinstance(data.get(name), Mapping)]
        if missing:
            raise ValueError(f"Corpus statistics lack the counts {missing}: rebuild them with CorpusStatistics")
        statistics = cls()
        for name in ("tokens", "entities", "superentities"):
            value = data[name]
            setattr(statistics, name, {key: dict(v) for key, v in value.items()} if copy else value)
        statistics.n_documents = int(data.get("n_documents", 0))
        return statistics

    def __eq__(self, other) -> bool:
        if not isinstance(other, CorpusStatistics):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return (
            f"CorpusStatistics(n_documents={self.n_documents}, tokens={len(self.tokens)}, "
            f"entities={len(self.entities)}, superentities={len(self.superentities)})"
        )


class CountsWithout:
    """Counts (``Counts``-like: ``get(key)``) of a corpus without one
    document's: the corpus counts minus the document's, for corpus features
    that leave the document itself out."""

    def __init__(self, corpus: Mapping[str, Mapping[str, float]], document: Mapping[str, Mapping[str, float]]):
        self.corpus, self.document = corpus, document

    def get(self, key: str) -> Optional[Dict[str, float]]:
        total, own = self.corpus.get(key), self.document.get(key)
        if not own or not total:
            return total
        left = {label: count - own.get(label, 0) for label, count in total.items()}
        return {label: count for label, count in left.items() if count > 1e-9}


def label_index(labels: Sequence[str]) -> Dict[str, int]:
    """Feature value of each label: 1 + its position (0 is "none")."""
    labels = list(labels)
    if len(set(labels)) != len(labels) or any(not isinstance(label, str) or label == OUTSIDE for label in labels):
        raise ValueError(f"labels must be distinct non-empty strings, got {labels!r}")
    return {label: k + 1 for k, label in enumerate(labels)}


def nonlocal_features(
    tokens: Union[Sequence[str], Words],
    spans: Sequence[Span],
    labels: Sequence[str],
    corpus: Optional[CorpusStatistics] = None,
    votes: Optional[Sequence[Vote]] = None,
    without_document: bool = False,
) -> np.ndarray:
    """The six majority features of every token of one document.

    tokens: the document's token texts (n), or their ``Words``; spans: the first stage's entities,
    ``(start, end_exclusive, label)``; labels: K labels, feature value 1 + k
    for ``labels[k]``; corpus: corpus counts (which should include this
    document, see the module docstring), or None for no corpus features;
    votes: the first stage's soft votes ``(start, end_exclusive, label, p)``
    counted in the document features instead of the spans (None: hard votes);
    without_document: the corpus counts include this document and its own
    counts are taken out of them (leave one out), so that a document's corpus
    features never count its own entities.

    Returns (n, 6) int32 in 0..K: document token-, entity-, superentity-majority,
    then the same at corpus level (zeros when corpus is None). Definitions and
    tie rule: module docstring (Krishnan & Manning 2006, sec. 4).
    """
    index = label_index(labels)
    words = Words.from_tokens(tokens)
    n = len(words.ids)
    spans = _check_spans(spans, n)
    chosen = _covering_spans(spans, n)
    out = np.zeros((n, N_FEATURES), dtype=np.int32)
    document_counts = count_document(words, spans, None if votes is None else _check_votes(votes, n))
    out[:, :3] = majority_columns(words, spans, chosen, document_counts, index)
    if corpus is not None:
        counts = corpus.counts
        if without_document:
            counts = tuple(CountsWithout(c, d) for c, d in zip(counts, document_counts))
        out[:, 3:] = majority_columns(words, spans, chosen, counts, index)
    return out
