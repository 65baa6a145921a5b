"""``python -m experiments nested-study ...``: the nested-mention experiments
of ``project.yml`` (Corro 2023 on GENIA, and UD English-GUM with and without
dependency guidance).

    train     trains every nested model of MODELS and the GUM parser, ``--jobs`` at a time
    tune      sets the mention penalty of the hypergraph models on dev (Lu & Roth 2015, sec. 3.7)
    evaluate  P/R/F and words/s of every model on the test files (GUM's
              dependency-guided model also with the parser's trees)
    report    METRICS/report.md from the coverage, evaluation and decoding tables

GUM is CC BY-NC-SA 4.0 (non-commercial); GENIA is read from its JSON-lines files.
"""
import json
from pathlib import Path
from typing import Dict, Optional

import typer
from tqdm import tqdm

from spacy_depner.evaluation.corpus_scores import nested_scores
from spacy_depner.evaluation.penalty_tuning import tune_pipeline_penalty
from spacy_depner.evaluation.progress import progress

from .nested_models import MODELS, PARSER, corpus_files, corpus_overrides
from .nested_report import write_nested_report
from .options import CONFIGS, DATA, GENIA, JOBS, JSON_OUTPUT, PIPELINES, SPLIT, TRAINED
from .outputs import write_json
from .runs import run_all, train_command

nested_study = typer.Typer(no_args_is_help=True, help="The nested-mention experiments of project.yml")


@nested_study.command("train")
def train(
    data: Path = DATA,
    genia: Optional[Path] = GENIA,
    output: Path = TRAINED,
    configs: Path = CONFIGS,
    steps: int = typer.Option(2000, help="Training steps of every nested model"),
    parser_steps: int = typer.Option(3000, help="Training steps of the GUM parser"),
    limit: int = typer.Option(0, help="Train and dev sentences (0: all)"),
    jobs: int = JOBS,
) -> None:
    """Train every nested model (gold trees where used) and the GUM parser; wall times to OUTPUT/train_seconds.json."""
    runs = {PARSER: train_command(configs / "parser_gum.cfg", output / PARSER, data, parser_steps, limit, [])}
    for model in MODELS:
        runs[model.name] = train_command(configs / model.config, output / model.name, data, steps, limit,
                                         model.overrides + corpus_overrides(model.corpus, genia))
    seconds = run_all(runs, output, jobs, steps=steps, parser_steps=parser_steps)
    typer.echo(json.dumps(seconds, indent=2))


@nested_study.command("tune")
def tune(
    data: Path = DATA,
    genia: Optional[Path] = GENIA,
    models: Path = PIPELINES,
    step: float = typer.Option(0.01, help="Step of the search (the paper: 0.01)"),
) -> None:
    """Tune the mention penalty of every hypergraph model on dev for F1; the
    tuned pipeline goes beside model-best, as model-tuned."""
    results = {}
    tuned = [model for model in MODELS if model.tuned]
    for model in progress(tuned, len(tuned), "models tuned", unit="model"):
        results[model.name] = tune_pipeline_penalty(models / model.name / "model-best", models / model.name / "model-tuned",
                                                    **corpus_files(data, model.corpus, "dev", genia), step=step)
        tqdm.write(f"{model.name}: {results[model.name]}")
    write_json(models / "tuned_penalties.json", results)


@nested_study.command("evaluate")
def evaluate(
    data: Path = DATA,
    genia: Optional[Path] = GENIA,
    models: Path = PIPELINES,
    output: Path = JSON_OUTPUT,
    split: str = SPLIT,
) -> None:
    """P/R/F (fractions) and words/s of every model on SPLIT: gold trees, and for the
    dependency-guided GUM model also the GUM parser's trees."""
    results: Dict[str, Dict] = {}
    for model in progress(MODELS, len(MODELS), "models evaluated", unit="model"):
        path, files = models / model.name / "model-best", corpus_files(data, model.corpus, split, genia)
        results[model.name] = nested_scores(path, **files)
        if model.guided:
            results[model.name + "@predicted"] = nested_scores(path, **files, parser=models / PARSER / "model-best")
        if model.tuned:
            results[model.name + "@tuned"] = nested_scores(models / model.name / "model-tuned", **files)
        tqdm.write(f"{model.name}: F {results[model.name]['f']:.4f}, {results[model.name]['words_per_second']} words/s")
    write_json(output, {"split": split, "models": results})


@nested_study.command("report")
def report(
    metrics: Path = typer.Option(..., help="Folder of coverage_*.json, evaluation.json, decode.md"),
    models: Path = PIPELINES,
) -> None:
    """Write METRICS/report.md."""
    path = write_nested_report(metrics, models)
    typer.echo(path.read_text())
