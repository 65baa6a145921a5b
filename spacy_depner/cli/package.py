"""``python -m spacy_depner package``: a trained pipeline packaged with
``spacy package``, its evaluation in the meta."""

import json
import warnings
from pathlib import Path
from typing import Dict, List, Optional

import typer

from ..workflows.packaging import build_package, evaluation_notes, evaluation_scores, package_meta

EVALUATION_HELP = (
    "SPLIT=FILE (repeatable): the JSON that `evaluate --output` or `evaluate-nested --output` wrote "
    "on that split; its P/R/F go into the meta's performance (SPLIT_p, SPLIT_r, SPLIT_f) and README"
)


OLD_WHEEL = (
    "--wheel and --no-wheel are deprecated and go in the next release: use -b sdist,wheel or -b sdist, as spacy package"
)
BUILDS = ("sdist", "wheel")


def builds_wheel(build: str) -> bool:
    """Whether ``--build`` (spacy package's comma-separated formats) asks
    for a wheel; the sdist is always built (the wheel is made from it)."""
    formats = [f.strip() for f in build.split(",") if f.strip()]
    unknown = [f for f in formats if f not in BUILDS]
    if unknown or not formats:
        raise typer.BadParameter(
            f"--build {build!r}: give sdist, or sdist,wheel (this command always builds the sdist; 'none' is "
            "not offered)"
        )
    return "wheel" in formats


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
        ..., metavar="OUTPUT_DIR", help="Folder of the package folders (OUTPUT_DIR/<lang>_<name>-<version>/)"
    ),
    name: str = typer.Option(
        ..., "--name", "-n", help="Package name, e.g. depner_own (spaCy puts the language in front)"
    ),
    version: str = typer.Option("0.1.0", "--version", "-v", help="Package version"),
    evaluation: List[str] = typer.Option([], help=EVALUATION_HELP),
    license: Optional[str] = typer.Option(None, help="The package's licence (default: the pipeline's meta.json's)"),
    description: Optional[str] = typer.Option(None, help="Package description (default: the pipeline's meta.json's)"),
    build: str = typer.Option(
        "sdist",
        "--build",
        "-b",
        help="Comma-separated formats to build, as spacy package: sdist, or sdist,wheel (or wheel; the wheel is "
        "built from the sdist with pip, offline, and both are kept)",
    ),
    wheel: Optional[bool] = typer.Option(
        None, "--wheel/--no-wheel", hidden=True, help="Deprecated: -b sdist,wheel / -b sdist"
    ),
) -> None:
    """Package a trained pipeline, its evaluation in the meta.

    Writes OUTPUT_DIR/<lang>_<name>-<version>/ with spacy package: meta.json,
    setup.py, README.md, LICENSES_SOURCES and dist/<...>.tar.gz (and with
    -b sdist,wheel the wheel). The meta requires spacy-depner (the package needs no
    code of its own), keeps the dev scores spacy train weighed and adds the
    P/R/F of every --evaluation. The options of `spacy package` have its
    names; --wheel/--no-wheel, the earlier names, work with a warning until
    the next release."""
    with_wheel = builds_wheel(build)
    if wheel is not None:
        warnings.warn(OLD_WHEEL, FutureWarning)
        with_wheel = wheel
    scores = split_evaluations(evaluation)
    performance = {f"{split}_{measure}": value for split, s in scores.items() for measure, value in s.items()}
    meta = package_meta(pipeline, name, version, performance, evaluation_notes(scores), description, license)
    for path in build_package(pipeline, output, meta, with_wheel):
        typer.echo(f"{path} ({path.stat().st_size / 1e6:.1f} MB)")
    typer.echo(f"{meta['lang']}_{meta['name']} {version}: licence {meta['license'] or 'not given'}")
