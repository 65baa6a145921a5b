"""``python -m spacy_depner tune-penalty`` and ``tune-threshold``: decoding
settings of a trained pipeline tuned on development data for F1 (the mention
penalty of hypergraph_ner, Lu & Roth 2015, sec. 3.7; the probability
threshold of any entity component)."""
import json
from pathlib import Path
from typing import Optional

import typer

from ..evaluation.penalty_tuning import tune_pipeline_penalty
from ..evaluation.setting_search import tune_pipeline_threshold
from .calibrate import DATA_HELP, PARSER_HELP, SPANS_KEY_HELP, UNER_HELP


def tune_penalty(
    model: Path = typer.Argument(..., help="Trained pipeline with a hypergraph_ner component"),
    output: Path = typer.Argument(..., help="Where to save the pipeline with the tuned mention penalty (written to a "
                                "temporary folder, then renamed; it may replace MODEL)"),
    jsonl: Optional[Path] = typer.Option(None, help="GENIA JSON-lines development file"),
    gum: Optional[Path] = typer.Option(None, help="UD English-GUM CoNLL-U development file"),
    component: str = typer.Option("hypergraph_ner", help="Name of the hypergraph_ner component"),
    step: float = typer.Option(0.01, help="Step of the search (Lu & Roth 2015, sec. 3.7: 0.01)"),
    low: float = typer.Option(-3.0, help="Smallest penalty tried"),
    high: float = typer.Option(3.0, help="Largest penalty tried"),
) -> None:
    """Set the mention penalty of a hypergraph_ner pipeline for the best F1 on
    development data (a fixed-step search) and save the pipeline to OUTPUT."""
    if (jsonl is None) == (gum is None):
        raise typer.BadParameter("give one of --jsonl or --gum")
    typer.echo(json.dumps(tune_pipeline_penalty(model, output, jsonl, gum, component, step, low, high), indent=2))


def tune_threshold(
    model: Path = typer.Argument(..., metavar="PIPELINE", help="Trained pipeline directory"),
    dev: Path = typer.Argument(..., metavar="DEV", help="Development data file: " + DATA_HELP),
    output: Path = typer.Argument(..., metavar="OUTPUT", help="Where to save the pipeline with the tuned threshold "
                                  "(written to a temporary folder, then renamed; it may replace PIPELINE)"),
    component: Optional[str] = typer.Option(None, help="Component to tune (default: the pipeline's one entity component)"),
    png: Optional[Path] = typer.Option(None, help="PNG file of the precision/recall curve, the chosen threshold marked"),
    step: float = typer.Option(0.01, help="Step of the thresholds tried, from 0 to 1"),
    uner: Optional[Path] = typer.Option(None, help=UNER_HELP),
    spans_key: Optional[str] = typer.Option(None, help=SPANS_KEY_HELP),
    parser: Optional[Path] = typer.Option(None, help=PARSER_HELP),
) -> None:
    """Set the threshold of an entity component of PIPELINE (spans whose
    probability is below it are dropped) for the best F1 on DEV: one
    decoding, then the spans filtered at each of 0, step, ..., 1 (the first
    best on ties). Saves the pipeline to OUTPUT; prints the tuned and the
    previous threshold with their P/R/F (fractions)."""
    typer.echo(json.dumps(tune_pipeline_threshold(model, dev, output, component, step, png, uner, spans_key, parser),
                          indent=2))
