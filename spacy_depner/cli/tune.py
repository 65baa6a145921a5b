"""``python -m spacy_depner find-penalty`` and ``find-threshold``: decoding
settings of a trained pipeline searched on development data for F1 (the
mention penalty of hypergraph_ner, Lu & Roth 2015, sec. 3.7; the probability
threshold or the posterior penalty of any entity component), saved with the pipeline."""

import warnings
from pathlib import Path
from typing import Optional, Tuple

import typer

from ..evaluation.penalty_tuning import tune_pipeline_penalty
from ..evaluation.threshold_tuning import TUNED_SETTINGS, tune_pipeline_threshold
from .arguments import (
    DATA_HELP,
    IOB2_HELP,
    NESTED_HELP,
    PARSER_HELP,
    PIPELINE_HELP,
    SPANS_KEY_HELP,
    TUNED_FORCE_HELP,
    import_code,
    nested_data,
    print_tuned,
    spacy_options,
    use_gpu,
)

OUTPUT_HELP = "Where to save the pipeline with the {} (written to a temporary folder, then renamed; it may be PIPELINE)"


def find_penalty(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP + " with a hypergraph_ner component"),
    data: Path = typer.Argument(..., metavar="DATA", help="Development data: " + NESTED_HELP),
    output: Path = typer.Argument(..., metavar="OUTPUT", help=OUTPUT_HELP.format("mention penalty found")),
    component: str = typer.Option("hypergraph_ner", help="Name of the hypergraph_ner component"),
    step: float = typer.Option(0.01, help="Step of the search (Lu & Roth 2015, sec. 3.7: 0.01)"),
    low: float = typer.Option(-3.0, help="Smallest penalty tried"),
    high: float = typer.Option(3.0, help="Largest penalty tried"),
    force: bool = typer.Option(False, "--force", help=TUNED_FORCE_HELP),
) -> None:
    """Find the mention penalty with the best dev F1.

    A fixed-step search from --low to --high; prints the penalty found and
    the input's own (before_*) with their P/R/F; saves the pipeline with the
    penalty found, or with its own when that scores higher on DATA (unless
    --force)."""
    jsonl, gum = nested_data(data)
    result = tune_pipeline_penalty(pipeline, output, jsonl, gum, component, step, low, high, force)
    print_tuned(result, "penalty", data)


OLD_THRESHOLD_FORM = (
    "find-threshold PIPELINE DATA OUTPUT is deprecated and goes in the next release: write find-threshold "
    "PIPELINE DATA PIPE_NAME threshold SCORES_KEY --output OUTPUT, as spacy find-threshold (--output: save)"
)


THRESHOLD = spacy_options(
    OUTPUT_HELP.format("threshold found") + "; default: print only",
    "On the data's own tokens, as spacy find-threshold --gold-preproc (the default and the only way)",
    retokenize=False,
)


def threshold_form(
    pipe_name: Optional[str], threshold_key: Optional[str], scores_key: Optional[str], output: Optional[Path]
) -> Tuple[Optional[str], Optional[Path]]:
    """(component, output) of find-threshold's positional arguments after
    PIPELINE DATA: none (the one entity component), spaCy's PIPE_NAME
    THRESHOLD_KEY SCORES_KEY, or the earlier OUTPUT alone (a warning)."""
    given = [a for a in (pipe_name, threshold_key, scores_key) if a is not None]
    if len(given) == 1:
        warnings.warn(OLD_THRESHOLD_FORM, FutureWarning)
        if output is not None:
            raise typer.BadParameter(f"OUTPUT {pipe_name} and --output {output}: give one (--output)")
        return None, Path(pipe_name)
    if len(given) == 2:
        raise typer.BadParameter(
            "give PIPE_NAME THRESHOLD_KEY SCORES_KEY, all three (as spacy find-threshold), or none"
        )
    if threshold_key is not None and threshold_key not in TUNED_SETTINGS:
        raise typer.BadParameter(
            f"THRESHOLD_KEY {threshold_key!r}: the settings tuned here are the components' 'threshold' and "
            "'posterior_penalty' (with decoding = \"posterior\"; spaCy's own `spacy find-threshold` tunes other keys)"
        )
    if scores_key is not None and not scores_key.endswith("_f"):
        raise typer.BadParameter(
            f"SCORES_KEY {scores_key!r}: the threshold is chosen for the F1 of the component's spans "
            "(ents_f, spans_KEY_f); give an F key"
        )
    return pipe_name, output


def find_threshold(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    data: Path = typer.Argument(..., metavar="DATA", help="Development data: " + DATA_HELP),
    pipe_name: Optional[str] = typer.Argument(
        None, metavar="PIPE_NAME", help="Component to tune (default: the pipeline's one entity component)"
    ),
    threshold_key: Optional[str] = typer.Argument(
        None,
        metavar="THRESHOLD_KEY",
        help='Setting to tune: threshold (the default), or posterior_penalty (sets decoding = "posterior")',
    ),
    scores_key: Optional[str] = typer.Argument(
        None,
        metavar="SCORES_KEY",
        help="Score to maximise: the F1 of the component's spans (ents_f, or spans_KEY_f for a span group)",
    ),
    n_trials: int = typer.Option(
        101, "--n_trials", "-n", min=2, help="Thresholds tried, evenly from 0 to 1 (spacy find-threshold's -n)"
    ),
    output: Optional[Path] = THRESHOLD["output"],
    code: Optional[Path] = THRESHOLD["code"],
    gpu_id: int = THRESHOLD["gpu_id"],
    gold_preproc: bool = THRESHOLD["gold_preproc"],
    png: Optional[Path] = typer.Option(
        None, help="PNG file of the precision/recall curve, the chosen threshold marked"
    ),
    iob2: Optional[Path] = typer.Option(None, help=IOB2_HELP),
    spans_key: Optional[str] = typer.Option(None, help=SPANS_KEY_HELP),
    parser: Optional[str] = typer.Option(None, help=PARSER_HELP),
    force: bool = typer.Option(False, "--force", help=TUNED_FORCE_HELP),
    component: Optional[str] = typer.Option(None, hidden=True, help="Deprecated: PIPE_NAME"),
    step: Optional[float] = typer.Option(None, hidden=True, help="Deprecated: -n"),
) -> None:
    """Find the threshold or posterior penalty best on dev F1.

    As spacy find-threshold: PIPELINE DATA PIPE_NAME THRESHOLD_KEY
    SCORES_KEY (-n thresholds); the last three may be left out. Spans whose
    probability is below the threshold are dropped. One decoding, then the
    spans filtered at each threshold (the first best on ties), where spaCy's
    decodes again at each. THRESHOLD_KEY posterior_penalty: decoding =
    "posterior", the model scores the data once and each penalty from 0 to 1
    decodes its probabilities again (lower: more spans, more recall). Prints
    the value found and the input's own decoding (before_*) with their P/R/F
    (fractions); --output saves the pipeline with the value found, or with
    its own settings when they score higher on DATA (unless --force). The
    earlier form PIPELINE DATA OUTPUT, --component and --step work with a
    warning until the next release."""
    component_name, output = threshold_form(pipe_name, threshold_key, scores_key, output)
    if component is not None:
        warnings.warn("--component is deprecated: give PIPE_NAME, as spacy find-threshold", FutureWarning)
        component_name = component_name or component
    if step is not None:
        warnings.warn("--step is deprecated: give -n, the number of thresholds, as spacy find-threshold", FutureWarning)
    import_code(code)
    use_gpu(gpu_id)
    result = tune_pipeline_threshold(
        pipeline,
        data,
        output,
        component_name,
        step or 1 / (n_trials - 1),
        png,
        iob2,
        spans_key,
        parser,
        threshold_key or "threshold",
        force,
    )
    print_tuned(result, threshold_key or "threshold", data)
