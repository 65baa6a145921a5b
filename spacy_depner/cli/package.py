"""``python -m spacy_depner package``: a trained pipeline packaged with
``spacy package``, its evaluation in the meta."""

import json
from pathlib import Path
from typing import Dict, List, Optional

import typer

from ..workflows.packaging import build_package, evaluation_notes, evaluation_scores, package_meta

EVALUATION_HELP = (
    "SPLIT=FILE (repeatable): the JSON that `evaluate --output` or `evaluate-nested --output` wrote "
    "on that split; its P/R/F go into the meta's performance (SPLIT_p, SPLIT_r, SPLIT_f) and README"
)


def split_evaluations(evaluation: List[str]) -> Dict[str, Dict[str, float]]:
    """{split: P/R/F} of the --evaluation SPLIT=FILE values."""
    scores = {}
    for value in evaluation:
        split, _, path = value.partition("=")
        if not split or not path:
            raise ValueError(f"--evaluation {value}: give SPLIT=FILE, e.g. test=metrics/test.json")
        scores[split] = evaluation_scores(json.loads(Path(path).read_text(encoding="utf8")), f"--evaluation {path}")
    return scores


def package(
    pipeline: Path = typer.Argument(
        ..., metavar="PIPELINE_DIR", help="Trained pipeline directory (e.g. spacy train's model-best)"
    ),
    output: Path = typer.Argument(
        ..., metavar="OUTPUT", help="Folder of the package folders (OUTPUT/<lang>_<name>-<version>/)"
    ),
    name: str = typer.Option(..., help="Package name, e.g. depner_own (spaCy puts the language in front)"),
    version: str = typer.Option("0.1.0", help="Package version"),
    evaluation: List[str] = typer.Option([], help=EVALUATION_HELP),
    license: Optional[str] = typer.Option(None, help="The package's licence (default: the pipeline's meta.json's)"),
    description: Optional[str] = typer.Option(None, help="Package description (default: the pipeline's meta.json's)"),
    wheel: bool = typer.Option(False, help="Also build a wheel (pip wheel of the sdist, offline)"),
) -> None:
    """Package a trained pipeline, its evaluation in the meta.

    Writes OUTPUT/<lang>_<name>-<version>/ with spacy package: meta.json,
    setup.py, README.md, LICENSES_SOURCES and dist/<...>.tar.gz (and with
    --wheel the wheel). The meta requires spacy-depner (the package needs no
    code of its own), keeps the dev scores spacy train weighed and adds the
    P/R/F of every --evaluation."""
    scores = split_evaluations(evaluation)
    performance = {f"{split}_{measure}": value for split, s in scores.items() for measure, value in s.items()}
    meta = package_meta(pipeline, name, version, performance, evaluation_notes(scores), description, license)
    for path in build_package(pipeline, output, meta, wheel):
        typer.echo(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    typer.echo(f"{meta['lang']}_{meta['name']} {version}: licence {meta['license'] or 'not given'}")
