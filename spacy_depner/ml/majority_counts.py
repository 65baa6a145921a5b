"""The counts behind the two-stage majority features (Krishnan & Manning
2006): a document's first-stage label counts (hard or soft votes), a
corpus's (``CorpusStatistics``), and a corpus's without one document
(``CountsWithout``). Definitions: ``spacy_depner.ml.majority_labels``.
Pure Python/numpy: no spaCy here."""

from typing import Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

Span = Tuple[int, int, str]
Vote = Tuple[int, int, str, float]  # a span and its weight (soft votes: its marginal probability)
Counts = Dict[str, Dict[str, float]]

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
