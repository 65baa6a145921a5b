"""``python -m spacy_depner evaluate`` and ``evaluate-nested``: score a
trained pipeline on corpus files. P/R/F and UAS/LAS are fractions (spaCy's unit)."""
import json
from pathlib import Path
from typing import Optional

import typer

from ..util.atomic_files import atomic_path
from ..evaluation.corpus_scores import evaluate_pipeline, nested_scores
from .arguments import IOB2_HELP, NESTED_HELP, PARSER_HELP, PIPELINE_HELP, nested_data


def evaluate(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    data: Path = typer.Argument(..., metavar="DATA", help="UD CoNLL-U file (.conllu: words, gold trees) of --iob2's sentences"),
    iob2: Path = typer.Option(..., help=IOB2_HELP),
    parser: Optional[str] = typer.Option(None, help=PARSER_HELP),
    output: Optional[Path] = typer.Option(None, help="JSON file to write, with per-sentence (TP, FP, FN) counts (default: print only)"),
    limit: int = typer.Option(0, help="Score only the first LIMIT sentences (0: all)"),
) -> None:
    """Score flat entities on CoNLL-U + IOB2: P/R/F, words/s.

    Prints P/R/F overall and per label, words/s, and with --parser that
    parser's UAS/LAS; --output also holds the per-sentence (TP, FP, FN)
    counts that the significance tests read. For a DocBin, use spaCy's own
    `spacy evaluate`."""
    if Path(data).suffix.lower() != ".conllu":
        raise ValueError(f"DATA {data} is no .conllu file: evaluate reads a UD CoNLL-U file with --iob2 (for a "
                         ".spacy DocBin use `spacy evaluate`, for nested mentions `evaluate-nested`)")
    result = evaluate_pipeline(pipeline, data, iob2, parser, limit=limit)
    summary = {k: v for k, v in result.items() if k != "sentence_counts"}
    if output:
        with atomic_path(output) as temporary:
            temporary.write_text(json.dumps(result), encoding="utf8")
    typer.echo(json.dumps(summary, indent=2))


def evaluate_nested(
    pipeline: str = typer.Argument(..., metavar="PIPELINE",
                                   help=PIPELINE_HELP + " that writes doc.spans[--spans-key] (nested_ner, spancat, ...)"),
    data: Path = typer.Argument(..., metavar="DATA", help=NESTED_HELP),
    parser: Optional[str] = typer.Option(None, help=PARSER_HELP + " (GUM only: GENIA has no trees)"),
    spans_key: str = typer.Option("nested_ner", help="Span group of the mentions"),
    output: Optional[Path] = typer.Option(None, help="JSON file to write (default: print only)"),
) -> None:
    """Score nested mentions on GENIA or GUM: P/R/F, words/s.

    On GUM with its gold trees, or with --parser's (its time excluded, its
    UAS/LAS reported)."""
    jsonl, gum = nested_data(data)
    if parser is not None and gum is None:
        raise typer.BadParameter(f"--parser goes with a GUM .conllu DATA: GENIA ({data}) has no trees")
    result = nested_scores(pipeline, jsonl, gum, parser, spans_key)
    if output:
        with atomic_path(output) as temporary:
            temporary.write_text(json.dumps(result, indent=2), encoding="utf8")
    typer.echo(json.dumps(result, indent=2))
