"""``python -m spacy_depner coverage``: how much of the gold entities each
lattice can represent, and how many candidate spans per token it has."""
import json
from dataclasses import replace
from pathlib import Path
from typing import Dict, Optional, Sequence

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


def with_parsed_trees(corpus: UNERCorpus, parser: Path) -> UNERCorpus:
    """The corpus with each sentence's heads replaced by those of the parser
    pipeline at ``parser`` (-1 for a root)."""
    from .evaluate import parse_corpus

    docs, _ = parse_corpus(parser, corpus)
    sentences = [
        replace(s, heads=[-1 if t.head.i == t.i else t.head.i for t in doc], deprels=[t.dep_ for t in doc])
        for s, doc in zip(corpus.sentences, docs)
    ]
    return replace(corpus, sentences=sentences)


def lattice_report(corpus: UNERCorpus) -> Dict:
    """sentences, tokens, entities; coverage (percent of gold entities that are
    candidate spans) and spans_per_token, per lattice, on the corpus's trees."""
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


def coverage_report(conllu, iob2, labels: Sequence[str] = DEFAULT_LABELS, parser: Optional[Path] = None) -> Dict:
    """``lattice_report`` of a CoNLL-U + IOB2 pair, with the gold trees or with
    those of the parser pipeline at ``parser``."""
    corpus = read_uner_corpus(conllu, iob2, labels)
    if parser is not None:
        corpus = with_parsed_trees(corpus, parser)
    return lattice_report(corpus)


@app.command("coverage")
def coverage(
    conllu: Optional[Path] = typer.Option(None, help="CoNLL-U file with the trees (flat entities, with --uner)"),
    uner: Optional[Path] = typer.Option(None, help="UNER IOB2 file with the entities of the same sentences"),
    jsonl: Optional[Path] = typer.Option(None, help="GENIA JSON-lines file (nested mentions)"),
    gum: Optional[Path] = typer.Option(None, help="UD English-GUM CoNLL-U file (nested mentions in Entity=)"),
    parser: Optional[Path] = typer.Option(None, help="Parser pipeline whose trees replace the gold ones (with --conllu)"),
    output: Optional[Path] = typer.Option(None, help="Also write the JSON to this file"),
) -> None:
    """Print JSON. With --conllu and --uner: sentences, tokens, entities,
    coverage and spans_per_token of the semi-Markov (L=8), DGM-S and DGM
    lattices (gold trees, or a parser's). With --jsonl or --gum: coverage of
    the nested mentions by the flat, nested and quadratic search spaces (and
    DGM valid spans of GUM's trees)."""
    from .nested_coverage import coverage_main

    if (conllu is None) != (uner is None):
        raise typer.BadParameter("--conllu and --uner go together")
    if sum(x is not None for x in (conllu, jsonl, gum)) != 1:
        raise typer.BadParameter("give one of: --conllu with --uner, --jsonl, --gum")
    report = coverage_report(conllu, uner, parser=parser) if conllu else coverage_main(jsonl=jsonl, gum=gum)
    text = json.dumps(report, indent=2)
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf8")
    typer.echo(text)
