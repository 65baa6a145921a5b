"""``python -m spacy_depner evaluate`` and ``evaluate-nested``: score a
trained pipeline on corpus files. P/R/F and UAS/LAS are fractions (spaCy's unit)."""
import json
from pathlib import Path
from typing import Optional

import typer

from ..util.atomic_files import atomic_path
from ..evaluation.corpus_scores import evaluate_pipeline, nested_scores


def evaluate(
    model: Path = typer.Argument(..., help="Trained pipeline directory"),
    conllu: Path = typer.Option(..., help="CoNLL-U file (words, and the gold trees)"),
    uner: Path = typer.Option(..., help="UNER IOB2 file with the entities of the same sentences"),
    parser: Optional[Path] = typer.Option(None, help="Parser pipeline for predicted trees (default: the gold trees)"),
    output: Optional[Path] = typer.Option(None, help="JSON file to write (default: print)"),
    limit: int = typer.Option(0, help="Score only the first LIMIT sentences (0: all)"),
) -> None:
    """Score MODEL on a CoNLL-U + IOB2 pair: P/R/F, words/s, and the parser's
    UAS/LAS with --parser; the output file also holds per-sentence (TP, FP, FN)
    counts for significance tests."""
    result = evaluate_pipeline(model, conllu, uner, parser, limit=limit)
    summary = {k: v for k, v in result.items() if k != "sentence_counts"}
    if output:
        with atomic_path(output) as temporary:
            temporary.write_text(json.dumps(result), encoding="utf8")
    typer.echo(json.dumps(summary, indent=2))


def evaluate_nested(
    model: Path = typer.Argument(..., help="Trained pipeline that writes doc.spans[spans_key] (nested_ner, spancat)"),
    jsonl: Optional[Path] = typer.Option(None, help="GENIA JSON-lines file"),
    gum: Optional[Path] = typer.Option(None, help="UD English-GUM CoNLL-U file (gold trees in the input)"),
    parser: Optional[Path] = typer.Option(None, help="With --gum: parser pipeline whose trees replace the gold ones"),
    spans_key: str = typer.Option("nested_ner", help="Span group of the mentions"),
    output: Optional[Path] = typer.Option(None, help="JSON file to write (default: print only)"),
) -> None:
    """P/R/F of nested mentions (overall and per label) and words/s on a GENIA
    or GUM file; on GUM with the gold trees, or a parser's (its time excluded)."""
    if (jsonl is None) == (gum is None):
        raise typer.BadParameter("give one of --jsonl or --gum")
    if parser is not None and gum is None:
        raise typer.BadParameter("--parser goes with --gum (GENIA has no trees)")
    result = nested_scores(model, jsonl, gum, parser, spans_key)
    if output:
        with atomic_path(output) as temporary:
            temporary.write_text(json.dumps(result, indent=2), encoding="utf8")
    typer.echo(json.dumps(result, indent=2))
