"""``python -m spacy_depner calibration-report`` and ``calibrate``: how well the
span probabilities of a trained pipeline are calibrated on data files (ECE,
reliability diagrams), and the temperatures that calibrate them."""

import json
from pathlib import Path
from typing import List, Optional

import typer

from ..evaluation.calibration import DEFAULT_BINS, TEMPERATURE_RANGE
from ..evaluation.calibration import calibration_report as span_calibration
from ..evaluation.label_temperatures import calibrate_pipeline, fit_compared
from ..util.atomic_files import atomic_path
from .arguments import DATA_HELP, IOB2_HELP, PARSER_HELP, PIPELINE_HELP, SPANS_KEY_HELP, TUNED_FORCE_HELP, print_tuned


def calibration_report(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    data: List[Path] = typer.Argument(..., metavar="DATA", help="One or more data files: " + DATA_HELP),
    output: Path = typer.Option(..., help="JSON report to write"),
    png: Optional[Path] = typer.Option(None, help="Folder for one reliability diagram (PNG) per component and file"),
    component: Optional[str] = typer.Option(
        None, help="Report this component only (default: every one that writes spans)"
    ),
    iob2: List[Path] = typer.Option([], help=IOB2_HELP + "; one per .conllu DATA, in order"),
    spans_key: Optional[str] = typer.Option(None, help=SPANS_KEY_HELP),
    parser: Optional[str] = typer.Option(None, help=PARSER_HELP),
    bins: int = typer.Option(DEFAULT_BINS, min=1, help="Equal-width probability bins of the ECE"),
) -> None:
    """Report how well span probabilities are calibrated (ECE).

    Per component that writes spans, the expected calibration error (sum
    over bins of |bin| / n * |accuracy - mean probability|, a span correct
    when its boundaries and label match a gold span), the negative
    log-likelihood, the reliability bins and P/R/F (fractions), per file and
    pooled. A component without span probabilities (spaCy's ner) is reported
    as such. Writes the report to --output and prints a summary."""
    report = span_calibration(pipeline, data, iob2, component, spans_key, parser, bins, png)
    with atomic_path(output) as temporary:
        temporary.write_text(json.dumps(report, indent=2), encoding="utf8")
    typer.echo(json.dumps(summary(report), indent=2))


def summary(report: dict) -> dict:
    """The report's components without their reliability bins: spans, ECE,
    NLL and P/R/F per file (and pooled), or why a component has none."""

    def short(entry: dict) -> dict:
        return {k: v for k, v in entry.items() if k != "reliability"}

    def component(entry: dict) -> dict:
        if "per_file" not in entry:
            return entry
        return {
            "per_file": [short(e) for e in entry["per_file"]],
            **({"all": short(entry["all"])} if "all" in entry else {}),
        }

    return {name: component(entry) for name, entry in report["components"].items()}


def calibrate(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    data: Path = typer.Argument(..., metavar="DATA", help="Development data: " + DATA_HELP),
    output: Path = typer.Argument(
        ...,
        metavar="OUTPUT",
        help="Where to save the pipeline with the fitted temperature "
        "(written to a temporary folder, then renamed; it may be PIPELINE)",
    ),
    component: Optional[str] = typer.Option(
        None, help="Component to calibrate (default: the pipeline's one entity component)"
    ),
    iob2: Optional[Path] = typer.Option(None, help=IOB2_HELP),
    spans_key: Optional[str] = typer.Option(None, help=SPANS_KEY_HELP),
    parser: Optional[str] = typer.Option(None, help=PARSER_HELP),
    low: float = typer.Option(TEMPERATURE_RANGE[0], help="Smallest temperature tried"),
    high: float = typer.Option(TEMPERATURE_RANGE[1], help="Largest temperature tried"),
    per_label: bool = typer.Option(
        False,
        "--per-label",
        help="Then fit a temperature per label (label_temperatures) "
        "by coordinate descent on the same objective, starting from the one temperature, "
        "among the settings whose MAP spans keep at least its dev F1",
    ),
    force: bool = typer.Option(False, "--force", help=TUNED_FORCE_HELP),
) -> None:
    """Fit temperatures that calibrate span probabilities.

    The temperature of an entity component of PIPELINE, fitted on DATA (the
    model's scores are divided by it before decoding; the MAP spans stay the
    same, their probabilities sharpen or flatten): the one value that
    minimises the negative log-likelihood of the spans' correctness; with
    --per-label, then one temperature per label of the scores (the MAP spans
    change, their dev F1 never below that of the one temperature), else
    label_temperatures is emptied. Saves the pipeline with
    them to OUTPUT and prints the ECE, NLL and P/R/F before, after the one
    temperature and after the per-label ones. Where the temperatures move
    the spans (a threshold above 0, posterior decoding, label temperatures
    emptied) and the input's own settings score a higher F1 on DATA, OUTPUT
    gets the input's own (chosen: before, a line on stderr), unless --force."""
    result = calibrate_pipeline(
        pipeline, data, output, component, iob2, spans_key, parser, low, high, per_label=per_label, force=force
    )
    print_tuned(result, "temperature", data, fit_compared(result))
