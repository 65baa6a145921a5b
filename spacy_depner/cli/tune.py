"""``python -m spacy_depner tune-penalty``: the mention penalty of a
hypergraph_ner pipeline tuned on development data (Lu & Roth 2015, sec. 3.7)."""
import json
from pathlib import Path
from typing import Optional

import typer

from ..evaluation.penalty_tuning import tune_pipeline_penalty


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
