"""``python -m spacy_depner first-stage-folds``: the first stage's
cross-validated entities on its training documents, which the second stage
of a two-stage model trains on."""

from pathlib import Path

import typer
from spacy.cli._util import parse_config_overrides

from ..workflows.first_stage_folds import write_first_stage_folds

# Config overrides after the arguments (--paths.data DIR, --training.max_steps N), as spacy train takes them.
OVERRIDES = {"allow_extra_args": True, "ignore_unknown_options": True}


def first_stage_folds(
    ctx: typer.Context,
    config: Path = typer.Argument(
        ...,
        metavar="CONFIG",
        help="First-stage config whose [corpora.train] reader "
        "takes folds = ${paths.folds} and exclude_fold = ${paths.exclude_fold}",
    ),
    output: Path = typer.Argument(
        ..., metavar="OUTPUT", help="Folder of the fold pipelines (OUTPUT/fold<f>) and of first_stage_train.jsonl"
    ),
    folds: int = typer.Option(10, help="Cross-validation folds of the training documents (Krishnan & Manning: 10)"),
) -> None:
    """Cross-validate a first stage on its training documents.

    Trains the first stage of every fold on the documents outside it
    (spacy train, to OUTPUT/fold<f>) and writes each training document's
    entities, from the model that did not see it, to
    OUTPUT/first_stage_train.jsonl: the first_stage file of the second
    stage's training reader. Config overrides follow, as for spacy train
    (e.g. --paths.data DIR)."""
    overrides = parse_config_overrides(ctx.args)
    typer.echo(write_first_stage_folds(config, output, folds, overrides))
