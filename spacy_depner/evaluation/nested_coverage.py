"""How many gold mentions of a nested-NER corpus each search space can hold.

The coverage of a search space is its *maximum recall* (Corro 2023, Table 5):
the largest number of gold mentions of a sentence that form one structure of
the space, summed over sentences, as a percent of all gold mentions. Spaces:

* ``flat``: non-overlapping mentions (the semi-Markov space).
* ``nested``: mentions no two of which overlap partially (a laminar set: any
  two are disjoint or one contains the other); the CYK-like O(n^3) space.
* ``quadratic``: laminar sets in which every mention has at most one child
  (largest mention strictly inside it among the kept ones) longer than one
  word; Corro's O(n^2) space.

Each count is exact: the structure's own Viterbi with +1 per gold mention on
the layout of the gold spans only (``structures.nested.NESTED.largest_subset``,
the same function that reduces ``nested_ner``'s gold analysis).
* ``dgm`` (with trees): mentions that are DGM valid spans of the trees (Jie,
  Muis & Lu 2017), via ``candidate_spans("dgm", ...)``; counted per mention,
  as the space is flat it is an upper bound, not a structure count.

As in Corro 2023 (footnote 2), a span carries one label in every space, so
mentions sharing a span with another (different types) count once: this is
why the nested coverage of GENIA is just below 100 % although no GENIA
mention crosses another. ``same_span`` reports how many mentions that costs.

``spans_per_token``: ``all``, every span of every sentence (n(n+1)/2 for a
sentence of n words), and ``dgm``, the valid spans of the trees, per token.
"""

from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ..structures.nested import NESTED
from ..structures.trees.candidate_spans import candidate_spans, span_index
from ..util.progress import progress

SPACES = ("flat", "nested", "quadratic")


def _distinct(spans: Iterable[Sequence]) -> List[Tuple[int, int]]:
    out = set()
    for span in spans:
        start, end = int(span[0]), int(span[1])
        if start < 0 or end <= start:
            raise ValueError(f"a mention must be (start, end_exclusive) with 0 <= start < end, got {tuple(span)!r}")
        out.add((start, end))
    return sorted(out)


def _most_mentions(spans: Iterable[Sequence], space: str) -> int:
    """The most of ``spans`` (start, end_exclusive; duplicates count once)
    that one analysis of the nested structure's ``space`` holds: its own
    Viterbi (``structures.nested.NESTED.largest_subset``)."""
    spans = _distinct(spans)
    if not spans:
        return 0
    mentions = np.array([[start, end - 1, 0] for start, end in spans], dtype=np.int64)
    offsets = np.array([0, max(end for _, end in spans)], dtype=np.int64)
    return int(NESTED.largest_subset(mentions, offsets, space=space).sum())


def max_flat(spans: Iterable[Sequence]) -> int:
    """Largest number of pairwise non-overlapping spans (duplicates count once)."""
    return _most_mentions(spans, "semi_markov")


def max_laminar(spans: Iterable[Sequence]) -> int:
    """Largest number of spans no two of which overlap partially (nested
    space; duplicates count once)."""
    return _most_mentions(spans, "cyk")


def max_quadratic(spans: Iterable[Sequence]) -> int:
    """Largest laminar subset in which every span has at most one child
    longer than one word (Corro 2023's quadratic space; duplicates count once)."""
    return _most_mentions(spans, "quadratic")


def _percent(kept: int, total: int) -> Optional[float]:
    return round(100.0 * kept / total, 2) if total else None


def _flat_heads(heads, lengths: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Absolute heads (-1 for roots) from per-sentence heads (0-based in the
    sentence, -1 for the root) or from an already flat array."""
    if len(heads) == len(lengths) and len(heads) and not np.isscalar(heads[0]):
        if [len(h) for h in heads] != lengths.tolist():
            raise ValueError("heads: one list per sentence, as long as the sentence")
        parts = [
            np.where(np.asarray(h, dtype=np.int64) >= 0, np.asarray(h, dtype=np.int64) + o, -1)
            for h, o in zip(heads, offsets[:-1])
        ]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    flat = np.asarray(heads, dtype=np.int64).reshape(-1)
    if flat.shape[0] != int(offsets[-1]):
        raise ValueError(f"heads: {flat.shape[0]} flat heads for {int(offsets[-1])} tokens")
    return flat


def nested_coverage_report(
    sentences_words: Sequence[Sequence[str]], mentions: Sequence[Sequence[Sequence]], heads=None, sentence_offsets=None
) -> Dict:
    """Coverage of the flat, nested and quadratic spaces (and DGM with trees).

    sentences_words: the words of each sentence. mentions: per sentence, the
    mentions as (start, end_exclusive, label, ...) in sentence coordinates.
    heads: optional trees, either one list per sentence (0-based in the
    sentence, -1 for the root, as ``Sentence.heads``) or a flat array of
    absolute heads (-1 or itself for a root) as in ``candidate_spans``.
    sentence_offsets: optional (n_sentences + 1,) token offsets; checked
    against the sentence lengths.

    Returns a JSON-able dict: sentences, tokens, mentions, distinct_spans,
    same_span (mentions lost to shared spans), inside_another (mentions
    strictly inside another's span), crossing_pairs (partially overlapping
    pairs of spans), kept (mentions per space), coverage (percent of
    mentions per space) and spans_per_token (all, and dgm with trees).
    """
    if len(mentions) != len(sentences_words):
        raise ValueError(f"{len(mentions)} mention lists for {len(sentences_words)} sentences")
    lengths = np.array([len(w) for w in sentences_words], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    if sentence_offsets is not None and not np.array_equal(np.asarray(sentence_offsets, dtype=np.int64), offsets):
        raise ValueError("sentence_offsets do not match the sentence lengths")
    kept = {space: 0 for space in SPACES}
    n_mentions = distinct = inside = crossing = 0
    for n_words, sentence in progress(zip(lengths.tolist(), mentions), len(lengths), "coverage", unit="sentence"):
        spans = [(int(m[0]), int(m[1])) for m in sentence]
        if any(e > n_words for _, e in spans):
            raise ValueError(f"a mention ends after its sentence of {n_words} words: {spans}")
        unique = _distinct(spans)
        n_mentions += len(spans)
        distinct += len(unique)
        inside += sum(any(s0 <= s and e <= e0 and (s, e) != (s0, e0) for s0, e0 in unique) for s, e in spans)
        crossing += sum(1 for s, e in unique for s1, e1 in unique if s < s1 < e < e1)
        kept["flat"] += max_flat(unique)
        kept["nested"] += max_laminar(unique)
        kept["quadratic"] += max_quadratic(unique)
    n_tokens = int(offsets[-1])
    report = {
        "sentences": len(lengths),
        "tokens": n_tokens,
        "mentions": n_mentions,
        "distinct_spans": distinct,
        "same_span": n_mentions - distinct,
        "inside_another": inside,
        "crossing_pairs": crossing,
        "kept": kept,
        "coverage": {space: _percent(k, n_mentions) for space, k in kept.items()},
        "spans_per_token": {"all": round(float((lengths * (lengths + 1) // 2).sum()) / max(n_tokens, 1), 3)},
    }
    if heads is not None:
        flat_heads = _flat_heads(heads, lengths, offsets)
        spans = candidate_spans("dgm", flat_heads, offsets, None)
        queries = np.array(
            [
                (o + int(m[0]), o + int(m[1]) - 1)
                for o, sentence in zip(offsets[:-1].tolist(), mentions)
                for m in sentence
            ],
            dtype=np.int64,
        ).reshape(-1, 2)
        found = int((span_index(spans, queries, n_tokens) >= 0).sum())
        report["kept"]["dgm"] = found
        report["coverage"]["dgm"] = _percent(found, n_mentions)
        report["spans_per_token"]["dgm"] = round(spans.shape[0] / max(n_tokens, 1), 3)
    return report


def genia_coverage(path) -> Dict:
    """``nested_coverage_report`` of a GENIA JSON-lines file (no trees)."""
    from ..readers.genia import read_genia

    sentences = read_genia(path)
    report = {"corpus": "genia", "file": str(path)}
    report.update(nested_coverage_report([w for w, _ in sentences], [m for _, m in sentences]))
    return report


def gum_coverage(path, parser: Optional[Path] = None) -> Dict:
    """``nested_coverage_report`` of a GUM CoNLL-U file, with its gold trees
    or those of the parser pipeline at ``parser`` (adds ``dgm``), plus the
    document count and the reader's counts."""
    from ..readers.gum import read_gum_corpus

    corpus = read_gum_corpus(path)
    sentences = [s for d in corpus.documents for s in d]
    heads = [s.sentence.heads for s in sentences]
    report = {"corpus": "gum", "file": str(path), "documents": len(corpus.documents), "trees": "given"}
    if parser is not None:
        from .corpus_scores import parse_sentences, sentence_heads

        docs, _ = parse_sentences(parser, [s.sentence for s in sentences])
        heads = [sentence_heads(doc) for doc in docs]
        report["trees"] = str(parser)
    report.update(
        nested_coverage_report([s.sentence.words for s in sentences], [s.mentions for s in sentences], heads=heads)
    )
    report["reader"] = corpus.stats.as_dict()
    return report


def coverage_main(jsonl: Optional[Path] = None, gum: Optional[Path] = None, parser: Optional[Path] = None) -> Dict:
    """The report of one GENIA JSON-lines file or one GUM CoNLL-U file (what
    ``python -m spacy_depner coverage FILE.jsonl | FILE.conllu [--parser P]`` prints)."""
    if (jsonl is None) == (gum is None):
        raise ValueError("give exactly one of jsonl (a GENIA JSON-lines file) or gum (a GUM CoNLL-U file)")
    if parser is not None and jsonl is not None:
        raise ValueError(
            f"--parser {parser}: GENIA ({jsonl}) has no DGM coverage to compute from trees; "
            "give the parser with a .conllu DATA"
        )
    return genia_coverage(jsonl) if jsonl is not None else gum_coverage(gum, parser)
