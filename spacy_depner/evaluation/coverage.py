"""How much of the gold entities each flat lattice can represent, and how
many candidate spans per token it has (Jie, Muis & Lu 2017, Tables 1 and 4),
on a corpus's gold trees or on a parser's. Coverage is a percent of the gold
entities, as in the paper's tables."""

from dataclasses import replace
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np

from ..readers.uner import DEFAULT_LABELS, UNERCorpus, read_uner_corpus
from ..structures import chain
from ..structures.chain import CHAIN
from ..structures.trees.candidate_spans import candidate_spans, span_index
from .corpus_scores import parse_corpus, sentence_heads

#: report key -> (structure, max_length) of ``candidate_spans``
LATTICES = {"semi_markov_L8": ("semi_markov", 8), "dgm_s": ("dgm_s", None), "dgm": ("dgm", None)}


def corpus_arrays(corpus: UNERCorpus):
    """Flat arrays of a corpus: heads (N,) absolute, -1 for roots;
    sentence_offsets (n_sentences + 1,); entities (M, 2) [first, last]."""
    lengths = np.array([len(s.words) for s in corpus.sentences], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    heads = np.concatenate([np.asarray(s.heads, dtype=np.int64) for s in corpus.sentences])
    heads = np.where(heads >= 0, heads + np.repeat(offsets[:-1], lengths), -1)
    return heads, offsets, iob2_spans(corpus.tags, offsets)


def iob2_spans(tags: Sequence[Sequence[str]], offsets: np.ndarray) -> np.ndarray:
    """Entities (M, 2) [first, last] of valid IOB2 tags (one list per
    sentence; ``offsets`` the sentences'), read by the BIO scheme of the
    linear chain (``CHAIN.mentions_of``)."""
    labels = sorted({tag[2:] for sentence in tags for tag in sentence if tag != "O"})
    if not labels:
        return np.zeros((0, 2), dtype=np.int64)
    index = {name: i for i, name in enumerate(CHAIN.tag_names(labels, "BIO"))}
    codes = np.array([index[tag] for sentence in tags for tag in sentence], dtype=np.int64)
    return CHAIN.mentions_of(codes, chain.layout(offsets), n_labels=len(labels), scheme="BIO")[:, :2]


def with_parsed_trees(corpus: UNERCorpus, parser: Path) -> UNERCorpus:
    """The corpus with each sentence's heads replaced by those of the parser
    pipeline at ``parser`` (-1 for a root)."""
    docs, _ = parse_corpus(parser, corpus)
    sentences = [
        replace(s, heads=sentence_heads(doc), deprels=[t.dep_ for t in doc]) for s, doc in zip(corpus.sentences, docs)
    ]
    return replace(corpus, sentences=sentences)


def lattice_report(corpus: UNERCorpus) -> Dict:
    """sentences, tokens, entities; coverage (percent of gold entities that are
    candidate spans) and spans_per_token, per lattice, on the corpus's trees."""
    heads, offsets, entities = corpus_arrays(corpus)
    n_tokens = int(offsets[-1])
    report = {
        "sentences": len(corpus.sentences),
        "tokens": n_tokens,
        "entities": int(entities.shape[0]),
        "coverage": {},
        "spans_per_token": {},
    }
    for name, (structure, max_length) in LATTICES.items():
        spans = candidate_spans(structure, heads, offsets, max_length)
        found = span_index(spans, entities, n_tokens) >= 0
        report["coverage"][name] = round(100.0 * found.mean(), 2) if len(found) else None
        report["spans_per_token"][name] = round(spans.shape[0] / max(n_tokens, 1), 3)
    return report


def coverage_report(conllu, iob2, labels: Sequence[str] = DEFAULT_LABELS, parser: Optional[Path] = None) -> Dict:
    """``lattice_report`` of a CoNLL-U + IOB2 pair, with the gold trees or with
    those of the parser pipeline at ``parser``."""
    corpus = read_uner_corpus(conllu, iob2, labels)
    if parser is not None:
        corpus = with_parsed_trees(corpus, parser)
    return lattice_report(corpus)
