"""``python -m experiments nested-study ...``: the nested-mention experiments
of ``project.yml`` (Corro 2023 on GENIA, and UD English-GUM with and without
dependency guidance).

    train     trains every nested model of MODELS (or those of ``--models``) and the GUM
              parser once per seed (``--seeds``), ``--jobs`` at a time, to OUTPUT/seed_<s>/<model>
    tune      sets the mention penalty of every seed's hypergraph models on dev (Lu & Roth 2015, sec. 3.7)
    evaluate  P/R/F and words/s of every model of every seed on the test files
              (GUM's dependency-guided model also with the same seed's parser's trees)
    report    METRICS/report.md from the coverage, evaluation and decoding tables

The steps after ``train`` take ``--seeds`` or find the seeds in the models
folder. GUM is CC BY-NC-SA 4.0 (non-commercial); GENIA is read from its
JSON-lines files.
"""

import json
from pathlib import Path
from typing import Annotated, Dict, List, Optional

import typer
from tqdm import tqdm

from spacy_depner.evaluation.corpus_scores import nested_scores
from spacy_depner.evaluation.penalty_tuning import tune_pipeline_penalty
from spacy_depner.util.progress import progress

from ..configs.pretrained import model_config
from ..kit.options import (
    CONFIGS,
    DATA,
    GENIA,
    JOBS,
    JSON_OUTPUT,
    PIPELINES,
    PRETRAINED_PIPELINE,
    RESUME,
    SEEDS,
    SPLIT,
    TRAIN_SEEDS,
    TRAINED,
    TRANSFORMER,
)
from ..kit.outputs import write_json
from ..kit.runs import run_seeds, train_command
from ..kit.seeds import chosen_seeds, parse_seeds, seed_folder, trained_names
from .models import MODELS, PARSER, NestedModel, corpus_files, corpus_overrides, model_names
from .report import write_nested_report

nested_study = typer.Typer(no_args_is_help=True, help="The nested-mention experiments of project.yml")


@nested_study.command("train")
def train(
    data: Path = DATA,
    genia: Optional[Path] = GENIA,
    output: Path = TRAINED,
    configs: Path = CONFIGS,
    steps: int = typer.Option(2000, help="Training steps of every nested model (at most, with --patience)"),
    eval_frequency: Annotated[
        int, typer.Option(help="Steps between evaluations on dev, at least four in all (0: four)")
    ] = 0,
    patience: Annotated[
        int, typer.Option(help="Stop a nested model's training after this many steps without a better dev F (0: never)")
    ] = 0,
    parser_steps: int = typer.Option(3000, help="Training steps of the GUM parser"),
    limit: int = typer.Option(0, help="Train and dev sentences (0: all)"),
    jobs: int = JOBS,
    seeds: str = TRAIN_SEEDS,
    models: str = typer.Option(
        "all",
        "--models",
        help=f"The models to train, e.g. genia_quadratic,genia_spancat "
        f"(all: {','.join(m.name for m in MODELS if not m.pretrained)}; "
        f"the models in a pretrained pipeline are named: "
        f"{','.join(m.name for m in MODELS if m.pretrained)})",
    ),
    pretrained_pipeline: Annotated[Optional[str], PRETRAINED_PIPELINE] = None,
    transformer: Annotated[Optional[str], TRANSFORMER] = None,
    resume: bool = RESUME,
) -> None:
    """Train the nested models (every one, or those of --models; gold trees
    where used) once per seed, and the GUM parser if a dependency-guided
    model is among them, to OUTPUT/seed_<s>/<model>; wall times per seed to
    OUTPUT/train_seconds.json."""
    names = model_names(models)
    chosen = [model for model in MODELS if model.name in names]
    runs = {}
    for seed in parse_seeds(seeds):
        folder = seed_folder(output, seed)
        runs[seed] = {}
        if any(model.guided for model in chosen):
            runs[seed][PARSER] = train_command(
                configs / "parser_gum.cfg", folder / PARSER, data, parser_steps, limit, [], seed
            )
        for model in chosen:
            config = model_config(
                configs,
                model.config,
                output,
                model.name,
                model.pretrained,
                pretrained_pipeline,
                transformer=transformer,
            )
            runs[seed][model.name] = train_command(
                config,
                folder / model.name,
                data,
                steps,
                limit,
                model.overrides + corpus_overrides(model.corpus, genia) + ["--training.patience", str(patience)],
                seed,
                eval_frequency,
            )
    seconds = run_seeds(
        runs,
        output,
        jobs,
        resume=resume,
        steps=steps,
        parser_steps=parser_steps,
        pretrained_pipeline=pretrained_pipeline,
        transformer=transformer,
    )
    typer.echo(json.dumps(seconds, indent=2))


def trained_models(models: Path, seeds: List[int]) -> List[NestedModel]:
    """The nested models whose pipeline every seed of ``seeds`` holds (``train --models`` may have trained some only)."""
    names = trained_names(models, seeds, [model.name for model in MODELS], "nested-study train")
    return [model for model in MODELS if model.name in names]


@nested_study.command("tune")
def tune(
    data: Path = DATA,
    genia: Optional[Path] = GENIA,
    models: Path = PIPELINES,
    step: float = typer.Option(0.01, help="Step of the search (the paper: 0.01)"),
    seeds: Optional[str] = SEEDS,
) -> None:
    """Tune the mention penalty of every seed's hypergraph models on dev for
    F1; each tuned pipeline goes beside its model-best, as model-tuned; the
    penalties to MODELS/tuned_penalties.json as {model: {seed: result}}."""
    chosen = chosen_seeds(models, seeds)
    tuned = [(seed, model) for seed in chosen for model in trained_models(models, chosen) if model.tuned]
    results: Dict[str, Dict] = {model.name: {} for _, model in tuned}
    for seed, model in progress(tuned, len(tuned), "models tuned (seeds x models)", unit="model"):
        folder = seed_folder(models, seed) / model.name
        results[model.name][str(seed)] = tune_pipeline_penalty(
            folder / "model-best", folder / "model-tuned", **corpus_files(data, model.corpus, "dev", genia), step=step
        )
        tqdm.write(f"{model.name} (seed {seed}): {results[model.name][str(seed)]}")
    write_json(models / "tuned_penalties.json", results)


@nested_study.command("evaluate")
def evaluate(
    data: Path = DATA,
    genia: Optional[Path] = GENIA,
    models: Path = PIPELINES,
    output: Path = JSON_OUTPUT,
    split: str = SPLIT,
    seeds: Optional[str] = SEEDS,
) -> None:
    """P/R/F (fractions) and words/s of every model of every seed on SPLIT:
    gold trees, and for the dependency-guided GUM model also the trees of
    the same seed's GUM parser: {"split", "seeds", "models": {key: {seed: result}}}
    (key: the model's name, NAME@predicted, NAME@tuned)."""
    chosen = chosen_seeds(models, seeds)
    runs = [(seed, model) for seed in chosen for model in trained_models(models, chosen)]
    results: Dict[str, Dict] = {}
    for seed, model in progress(runs, len(runs), "models evaluated (seeds x models)", unit="model"):
        folder, key = seed_folder(models, seed), str(seed)
        path, files = folder / model.name / "model-best", corpus_files(data, model.corpus, split, genia)
        results.setdefault(model.name, {})[key] = nested_scores(path, **files)
        if model.guided:
            parser = folder / PARSER / "model-best"
            results.setdefault(model.name + "@predicted", {})[key] = nested_scores(path, **files, parser=parser)
        if model.tuned:
            results.setdefault(model.name + "@tuned", {})[key] = nested_scores(
                folder / model.name / "model-tuned", **files
            )
        scores = results[model.name][key]
        tqdm.write(f"{model.name} (seed {seed}): F {scores['f']:.4f}, {scores['words_per_second']} words/s")
    write_json(output, {"split": split, "seeds": chosen, "models": results})


@nested_study.command("report")
def report(
    metrics: Path = typer.Option(..., help="Folder of coverage_*.json, evaluation.json, decode.md"),
    models: Path = PIPELINES,
) -> None:
    """Write METRICS/report.md."""
    path = write_nested_report(metrics, models)
    typer.echo(path.read_text())
