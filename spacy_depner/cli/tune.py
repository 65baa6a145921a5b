"""``python -m spacy_depner find-penalty`` and ``find-threshold``: decoding
settings of a trained pipeline searched on development data for F1 (the
mention penalty of hypergraph_ner, Lu & Roth 2015, sec. 3.7; the probability
threshold of any entity component), saved with the pipeline."""

import json
from pathlib import Path
from typing import Optional

import typer

from ..evaluation.penalty_tuning import tune_pipeline_penalty
from ..evaluation.threshold_tuning import tune_pipeline_threshold
from .arguments import DATA_HELP, IOB2_HELP, NESTED_HELP, PARSER_HELP, PIPELINE_HELP, SPANS_KEY_HELP, nested_data

OUTPUT_HELP = "Where to save the pipeline with the {} (written to a temporary folder, then renamed; it may be PIPELINE)"


def find_penalty(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP + " with a hypergraph_ner component"),
    data: Path = typer.Argument(..., metavar="DATA", help="Development data: " + NESTED_HELP),
    output: Path = typer.Argument(..., metavar="OUTPUT", help=OUTPUT_HELP.format("mention penalty found")),
    component: str = typer.Option("hypergraph_ner", help="Name of the hypergraph_ner component"),
    step: float = typer.Option(0.01, help="Step of the search (Lu & Roth 2015, sec. 3.7: 0.01)"),
    low: float = typer.Option(-3.0, help="Smallest penalty tried"),
    high: float = typer.Option(3.0, help="Largest penalty tried"),
) -> None:
    """Find the mention penalty with the best dev F1.

    A fixed-step search from --low to --high; prints the penalty found and
    its P/R/F."""
    jsonl, gum = nested_data(data)
    typer.echo(json.dumps(tune_pipeline_penalty(pipeline, output, jsonl, gum, component, step, low, high), indent=2))


def find_threshold(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    data: Path = typer.Argument(..., metavar="DATA", help="Development data: " + DATA_HELP),
    output: Path = typer.Argument(..., metavar="OUTPUT", help=OUTPUT_HELP.format("threshold found")),
    component: Optional[str] = typer.Option(
        None, help="Component to tune (default: the pipeline's one entity component)"
    ),
    png: Optional[Path] = typer.Option(
        None, help="PNG file of the precision/recall curve, the chosen threshold marked"
    ),
    step: float = typer.Option(0.01, help="Step of the thresholds tried, from 0 to 1"),
    iob2: Optional[Path] = typer.Option(None, help=IOB2_HELP),
    spans_key: Optional[str] = typer.Option(None, help=SPANS_KEY_HELP),
    parser: Optional[str] = typer.Option(None, help=PARSER_HELP),
) -> None:
    """Find the probability threshold with the best dev F1.

    Spans whose probability is below the threshold are dropped. One
    decoding, then the spans filtered at each of 0, step, ..., 1 (the first
    best on ties). Prints the threshold found and the previous one with
    their P/R/F (fractions). spaCy's own `spacy find-threshold` tunes the
    same setting by decoding again at each threshold."""
    typer.echo(
        json.dumps(
            tune_pipeline_threshold(pipeline, data, output, component, step, png, iob2, spans_key, parser), indent=2
        )
    )
