"""``python -m spacy_depner coverage``: how much of the gold entities each
lattice can represent, and how many candidate spans per token it has."""
import json
from pathlib import Path
from typing import Dict, Sequence

import numpy as np
import typer

from .cli import app
from .readers.uner import DEFAULT_LABELS, UNERCorpus, read_uner_corpus
from .structures.candidate_spans import candidate_spans, span_index

LATTICES = {"semi_markov_L8": ("semi_markov", 8), "dgm_s": ("dgm_s", None), "dgm": ("dgm", None)}


def corpus_arrays(corpus: UNERCorpus):
    """Flat arrays of a corpus: heads (N,) absolute, -1 for roots;
    sentence_offsets (n_sentences + 1,); entities (M, 2) [first, last]."""
    lengths = np.array([len(s.words) for s in corpus.sentences], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    heads = np.concatenate([np.asarray(s.heads, dtype=np.int64) for s in corpus.sentences])
    heads = np.where(heads >= 0, heads + np.repeat(offsets[:-1], lengths), -1)
    tags = np.array([t for tags in corpus.tags for t in tags])
    starts = np.flatnonzero(np.char.startswith(tags, "B-"))
    inside = np.char.startswith(tags, "I-")
    # an entity ends where the next tag is not I-
    continues = np.concatenate([inside[1:], [False]])
    ends = np.flatnonzero(~continues & (inside | np.char.startswith(tags, "B-")))
    return heads, offsets, np.stack([starts, ends], axis=1)


def coverage_report(conllu, iob2, labels: Sequence[str] = DEFAULT_LABELS) -> Dict:
    """sentences, tokens, entities; coverage (percent of gold entities that are
    candidate spans) and spans_per_token, per lattice."""
    corpus = read_uner_corpus(conllu, iob2, labels)
    heads, offsets, entities = corpus_arrays(corpus)
    n_tokens = int(offsets[-1])
    report = {"sentences": len(corpus.sentences), "tokens": n_tokens, "entities": int(entities.shape[0]),
              "coverage": {}, "spans_per_token": {}}
    for name, (structure, max_length) in LATTICES.items():
        spans = candidate_spans(structure, heads, offsets, max_length)
        found = span_index(spans, entities, n_tokens) >= 0
        report["coverage"][name] = round(100.0 * found.mean(), 2) if len(found) else None
        report["spans_per_token"][name] = round(spans.shape[0] / max(n_tokens, 1), 3)
    return report


@app.command("coverage")
def coverage(
    conllu: Path = typer.Option(..., help="CoNLL-U file with the trees"),
    uner: Path = typer.Option(..., help="UNER IOB2 file with the entities of the same sentences"),
) -> None:
    """Print JSON: sentences, tokens, entities, coverage and spans_per_token of
    the semi-Markov (L=8), DGM-S and DGM lattices (gold trees)."""
    typer.echo(json.dumps(coverage_report(conllu, uner), indent=2))
