"""``python -m experiments confidence``: the confidence study of trained
pipelines on a dev and a test file. For each entity component of this
package (dgm_ner, chain_ner, nested_ner, hypergraph_ner) in each pipeline,
with every choice made on dev only:

1. calibration: the temperature T fitted on dev (the negative
   log-likelihood of the correctness of the MAP spans, threshold 0, as
   ``python -m spacy_depner calibrate`` does), then a temperature per label
   (``fit_temperatures``, as ``calibrate --per-label``: the MAP spans
   move, their dev F1 never below that at T); ECE, NLL and
   P/R/F at T = 1, at T and per label on dev and test, reliability diagrams
   of test at each. The temperatures per label are chosen iff they lower
   the dev ECE below that of T;
2. threshold: at the chosen temperatures, the probability threshold with
   the best dev F1 (``tune_threshold`` on the MAP spans), its dev and test
   P/R/F and the precision/recall curve;
3. posterior decoding: at the chosen temperatures, the
   ``posterior_penalty`` with the best dev F1 among step, 2 step, ..., 1 -
   step (``grid_search``), its dev and test P/R/F beside MAP decoding's.

spaCy's ``spancat`` is reported with its own scores and threshold (no
temperature: it has none) for comparison; spaCy's ``ner`` writes no span
probabilities and is listed as such. The other components of a pipeline
annotate each file once (``component_inputs``); the component studied is
then decoded alone for every setting. Writes OUTPUT/confidence.json (P/R/F
as fractions), OUTPUT/report.md (percents) and OUTPUT/png/.
"""

import time
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import typer

from spacy_depner.evaluation.calibration import (
    DEFAULT_BINS,
    TEMPERATURE_RANGE,
    fitting_settings,
    span_writers,
    spans_summary,
)
from spacy_depner.evaluation.component_decoding import component_inputs, decode, probability_key
from spacy_depner.evaluation.data_files import data_kind, file_examples
from spacy_depner.evaluation.label_temperatures import fit_temperatures
from spacy_depner.evaluation.metrics import prf
from spacy_depner.evaluation.setting_search import grid_search, grid_values
from spacy_depner.evaluation.span_judging import judge, judged_prf
from spacy_depner.evaluation.threshold_tuning import threshold_counts, threshold_png, tune_threshold
from spacy_depner.util.progress import progress

from ..kit.outputs import write_json, write_linked_report
from ..kit.seeds import parse_seeds
from ..kit.tables import machine, percent, table

SPLITS = ("dev", "test")
SEED_MARK = "{seed}"
Judged = Tuple  # (probabilities (M,), correct (M,), number of gold spans): span_judging.judge's output


class DataFile(NamedTuple):
    path: Path
    uner: Optional[Path] = None  # the UNER IOB2 file of a UD CoNLL-U file


def parse_models(specs: Sequence[str], seed: int) -> Dict[str, Path]:
    """``NAME=PIPELINE`` options as {name: path}, ``{seed}`` in a path
    replaced by ``seed``; a ValueError for a malformed or repeated name or a
    folder that is not a saved pipeline."""
    if not specs:
        raise ValueError("give at least one --model NAME=PIPELINE")
    models: Dict[str, Path] = {}
    for spec in specs:
        name, sign, path = spec.partition("=")
        name = name.strip()
        if not sign or not name or not path or "/" in name:
            raise ValueError(
                f"--model {spec!r}: give NAME=PIPELINE, e.g. --model dgm=training/study/seed_0/dgm/model-best "
                "(a NAME without '/': it names the PNG files)"
            )
        if name in models:
            raise ValueError(f"--model {spec!r}: the name {name!r} is given twice; give each model its own name")
        models[name] = Path(path.replace(SEED_MARK, str(seed)))
        if not (models[name] / "config.cfg").is_file():
            raise ValueError(
                f"--model {spec!r}: {models[name]} is not a saved pipeline (no config.cfg): check the path "
                "(train the model first)"
            )
    return models


def check_penalty_step(step: float) -> float:
    """``step`` if the posterior penalty grid step, ..., 1 - step has a value, else a ValueError."""
    if not 0.0 < step <= 0.5:
        raise ValueError(
            f"--penalty-step {step}: it must lie in (0, 0.5], so that the penalties step, ..., 1 - step exist"
        )
    return float(step)


def summary(judged: Judged, bins: int, png: Optional[Path] = None, title: str = "") -> Dict[str, object]:
    """``spans_summary`` (ECE, NLL, reliability bins, P/R/F) of judged spans."""
    probabilities, correct, n_gold = judged
    return spans_summary(probabilities, correct, n_gold, bins, png, title)


def prf_of(judged: Judged) -> Dict[str, float]:
    """P/R/F of judged spans."""
    return judged_prf(judged[1], judged[2])


def own_scores(nlp, name: str, key: str, data: Dict[str, Tuple], bins: int) -> Dict[str, object]:
    """spaCy spancat's spans with its own scores and threshold on each split: ``summary`` per split."""
    pipe = nlp.get_pipe(name)
    entry: Dict[str, object] = {
        "factory": nlp.get_pipe_meta(name).factory,
        "kind": "spancat",
        "span_group": key,
        "temperature": None,
        "note": "its own scores and threshold; no temperature",
    }
    for split, (examples, gold) in data.items():
        docs = list(pipe.pipe(component_inputs(nlp, name, examples)))
        entry[split] = summary(judge(docs, gold, key, name), bins)
    return entry


def calibration_step(
    pipe,
    name: str,
    key: str,
    dev: Tuple,
    judged: Callable[..., Judged],
    diagram: Callable[[str, str], Tuple[Path, str]],
    bins: int,
) -> Tuple[Dict[str, object], Dict[str, object], Dict[str, Judged]]:
    """Step 1 for the component ``name`` (spans in ``doc.spans[key]``):
    ``dev`` (its inputs, gold spans); ``judged(split, **settings)`` its
    judged spans on a split decoded with ``settings``; ``diagram(when,
    caption)`` the PNG path and title of a test reliability diagram. Returns
    the calibration entry, the chosen temperature settings and the judged
    spans at them per split."""
    runs = {"before": {split: judged(split, temperature=1.0) for split in SPLITS}}
    temperature, settings = 1.0, {"after": {"temperature": 1.0}}
    fit: Dict[str, object] = {
        "temperature": None,
        "label_temperatures": None,
        "reason": f"'{name}' predicts no span on dev: no temperature fitted, T = 1 used",
    }
    if runs["before"]["dev"][0].size:
        fit = fit_temperatures(pipe, *dev, key, name, "dev")
        temperature = fit["temperature"]
        settings = {
            "after": {"temperature": temperature},
            "per_label": {"temperature": temperature, "label_temperatures": fit["label_temperatures"]},
        }
    for when, temperatures in settings.items():
        runs[when] = {split: judged(split, **temperatures) for split in SPLITS}
    captions = {"before": "T = 1", "after": f"T = {temperature:.4g}", "per_label": "a temperature per label"}
    calibration = {
        **fit,
        **{
            split: {
                when: summary(runs[when][split], bins, *(diagram(when, captions[when]) if split == "test" else ()))
                for when in runs
            }
            for split in SPLITS
        },
    }
    per_label = "per_label" in runs and calibration["dev"]["per_label"]["ece"] < calibration["dev"]["after"]["ece"]
    calibration["chosen"] = "per_label" if per_label else "one"
    chosen = "per_label" if per_label else "after"
    return calibration, settings[chosen], runs[chosen]


def study_component(
    nlp,
    name: str,
    key: str,
    data: Dict[str, Tuple],
    png: Path,
    model: str,
    penalty_step: float,
    threshold_step: float,
    bins: int,
) -> Dict[str, object]:
    """Calibration, threshold and posterior decoding of the component ``name``
    (spans in ``doc.spans[key]``) of the pipeline ``model`` on ``data``
    {split: (examples, gold spans)} (the module's steps 1-3, every choice on
    dev); PNGs PNG/MODEL-NAME-*.png."""
    pipe, prefix, title = nlp.get_pipe(name), f"{model}-{name}", f"{model}/{name}"
    inputs = {split: component_inputs(nlp, name, examples) for split, (examples, _) in data.items()}
    fitting = fitting_settings(pipe)

    def judged(split: str, **settings) -> Judged:
        return judge(decode(pipe, inputs[split], **{**fitting, **settings}), data[split][1], key, name)

    def diagram(when: str, caption: str) -> Tuple[Path, str]:
        return png / f"{prefix}-test-{when.replace('_', '-')}.png", f"{title}\ntest, {caption}"

    calibration, temperatures, after = calibration_step(
        pipe, name, key, (inputs["dev"], data["dev"][1]), judged, diagram, bins
    )

    tuned, curve = tune_threshold(*after["dev"], step=threshold_step)
    chosen = tuned["tuned_threshold"]
    probabilities, correct, n_gold = after["test"]
    threshold = {
        "threshold": chosen,
        "step": threshold_step,
        "dev": {k: tuned[f"tuned_{k}"] for k in ("p", "r", "f")},
        "test": prf(*(int(c) for c in threshold_counts(probabilities, correct, n_gold, [chosen])[0])),
        "png": str(threshold_png(curve, chosen, png / f"{prefix}-threshold.png", f"{title}: threshold on dev")),
        "curve": curve,
    }

    def posterior(split: str, penalty: float) -> Dict[str, float]:
        return prf_of(judged(split, **temperatures, decoding="posterior", posterior_penalty=penalty))

    if pipe.cfg.get("heads"):
        posterior_entry = {
            "posterior_penalty": None,
            "step": penalty_step,
            "reason": f"'{name}' has heads = true: posterior decoding is available without heads only",
        }
    else:
        best, penalties = grid_search(
            grid_values(penalty_step, 1.0 - penalty_step, penalty_step),
            lambda penalty: posterior("dev", penalty),
            "posterior_penalty",
        )
        posterior_entry = {
            "posterior_penalty": best["posterior_penalty"],
            "step": penalty_step,
            "dev": {k: best[k] for k in ("p", "r", "f")},
            "test": posterior("test", best["posterior_penalty"]),
            "curve": penalties,
        }
    return {
        "factory": nlp.get_pipe_meta(name).factory,
        "kind": "ours",
        "span_group": key,
        "pipeline_settings": {
            k: pipe.settings[k]
            for k in ("temperature", "label_temperatures", "threshold", "decoding", "posterior_penalty")
        },
        "calibration": calibration,
        "threshold": threshold,
        "map": {split: prf_of(after[split]) for split in SPLITS},
        "posterior": posterior_entry,
    }


def study_model(
    name: str,
    path: Path,
    files: Dict[str, DataFile],
    png: Path,
    component: Optional[str],
    parser: Optional[Path],
    penalty_step: float,
    threshold_step: float,
    bins: int,
) -> Dict[str, object]:
    """Every span-writing component (or ``component``) of the pipeline at
    ``path``, studied on the dev and test ``files``: {"path", "components"}."""
    import spacy

    nlp = spacy.load(path)
    names = span_writers(nlp, component, path)
    data = {split: file_examples(nlp, file.path, file.uner, None, parser) for split, file in files.items()}
    components: Dict[str, object] = {}
    for pipe_name in names:
        started, key = time.perf_counter(), probability_key(nlp, pipe_name)
        pipe, factory = nlp.get_pipe(pipe_name), nlp.get_pipe_meta(pipe_name).factory
        if key is not None and "temperature" in (getattr(pipe, "settings", None) or {}):
            entry = study_component(nlp, pipe_name, key, data, png, name, penalty_step, threshold_step, bins)
        elif key is not None and factory == "spancat":
            entry = own_scores(nlp, pipe_name, key, data, bins)
        else:
            entry = {
                "factory": factory,
                "kind": "none",
                "probabilities": None,
                "reason": f"'{pipe_name}' ({factory}) writes no span probabilities",
            }
        components[pipe_name] = {**entry, "seconds": round(time.perf_counter() - started, 2)}
    return {"path": str(path), "components": components}


def confidence_study(
    models: Dict[str, Path],
    dev: DataFile,
    test: DataFile,
    output: Path,
    component: Optional[str] = None,
    penalty_step: float = 0.05,
    threshold_step: float = 0.01,
    parser: Optional[Path] = None,
    bins: int = DEFAULT_BINS,
    seed: Optional[int] = None,
) -> Dict[str, object]:
    """The study of every model {name: pipeline folder} on ``dev`` and
    ``test``; writes OUTPUT/confidence.json, OUTPUT/report.md and
    OUTPUT/png/, and returns the JSON's content."""
    check_penalty_step(penalty_step)
    if not 0.0 < threshold_step <= 1.0:
        raise ValueError(f"--threshold-step {threshold_step}: it must lie in (0, 1]")
    files = {"dev": dev, "test": test}
    for file in files.values():
        data_kind(file.path, file.uner)
    png = Path(output) / "png"
    results = {
        "dev": str(dev.path),
        "test": str(test.path),
        "dev_uner": str(dev.uner) if dev.uner else None,
        "test_uner": str(test.uner) if test.uner else None,
        "seed": seed,
        "bins": bins,
        "temperature_range": list(TEMPERATURE_RANGE),
        "models": {},
    }
    for name, path in progress(list(models.items()), len(models), "models studied", unit="model"):
        results["models"][name] = study_model(
            name, path, files, png, component, parser, penalty_step, threshold_step, bins
        )
    write_json(Path(output) / "confidence.json", results)
    write_linked_report(Path(output) / "report.md", report(results))
    return results


def ece(entry: Optional[Dict[str, object]]) -> Optional[str]:
    """The ECE of a summary as a fraction with 3 decimals (None without one)."""
    return None if entry is None else f"{entry['ece']:.3f}"


def floor(entry: Optional[Dict[str, object]]) -> Optional[str]:
    """The ECE floor of a summary (a perfectly calibrated model's ECE at its probabilities) with 3 decimals."""
    return None if entry is None or entry.get("ece_floor") is None else f"{entry['ece_floor']:.3f}"


def component_rows(results: Dict[str, object], kind: str) -> List[Tuple[str, str, Dict[str, object]]]:
    """(model, component, entry) of every component of the kind ``kind``, in order."""
    return [
        (model, name, entry)
        for model, study in results["models"].items()
        for name, entry in study["components"].items()
        if entry["kind"] == kind
    ]


def label_cell(temperatures: Optional[Dict[str, float]]) -> Optional[str]:
    """Temperatures per label as "LABEL T, ...", "= T" when none differs
    from the one temperature (None when none was fitted)."""
    if temperatures is None:
        return None
    return ", ".join(f"{label} {t:.3g}" for label, t in temperatures.items()) or "= T"


def calibration_table(results: Dict[str, object]) -> str:
    """The markdown table of the temperatures and the ECEs before, after one
    temperature and after one per label, the choice, with spancat's rows."""
    rows = []
    for model, name, entry in component_rows(results, "ours"):
        fit = entry["calibration"]
        temperature = None if fit["temperature"] is None else f"{fit['temperature']:.4g}"
        chosen = fit["test"].get("per_label" if fit["chosen"] == "per_label" else "after")
        rows.append(
            [
                model,
                name,
                temperature,
                label_cell(fit["label_temperatures"]),
                *(ece(fit[split].get(when)) for split in SPLITS for when in ("before", "after", "per_label")),
                "per label" if fit["chosen"] == "per_label" else "one T",
                floor(chosen),
            ]
        )
    for model, name, entry in component_rows(results, "spancat"):
        rows.append(
            [
                model,
                f"{name} (own scores)",
                None,
                None,
                ece(entry["dev"]),
                None,
                None,
                ece(entry["test"]),
                None,
                None,
                None,
                floor(entry["test"]),
            ]
        )
    return table(
        [
            "model",
            "component",
            "T",
            "T per label",
            "ECE dev before",
            "ECE dev after",
            "ECE dev per label",
            "ECE test before",
            "ECE test after",
            "ECE test per label",
            "chosen",
            "test floor",
        ],
        rows,
    )


def decoding_table(results: Dict[str, object]) -> str:
    """The markdown table of MAP, threshold and posterior decoding: test P/R/F and dev F1 (percents)."""

    def p_r_f(scores: Dict[str, float]) -> List[Optional[float]]:
        return [percent(scores[k]) for k in ("p", "r", "f")]

    rows = []
    for model, name, entry in component_rows(results, "ours"):
        chosen, posterior = entry["threshold"], entry["posterior"]
        rows.append(
            [
                model,
                name,
                percent(entry["map"]["dev"]["f"]),
                *p_r_f(entry["map"]["test"]),
                f"{chosen['threshold']:g}",
                percent(chosen["dev"]["f"]),
                *p_r_f(chosen["test"]),
                *(
                    [f"{posterior['posterior_penalty']:g}", percent(posterior["dev"]["f"]), *p_r_f(posterior["test"])]
                    if posterior["posterior_penalty"] is not None
                    else ["–"] * 5
                ),
            ]
        )
    return table(
        [
            "model",
            "component",
            "MAP dev F",
            "MAP test P",
            "MAP test R",
            "MAP test F",
            "t",
            "t dev F",
            "t test P",
            "t test R",
            "t test F",
            "c",
            "c dev F",
            "c test P",
            "c test R",
            "c test F",
        ],
        rows,
    )


def report(results: Dict[str, object]) -> str:
    """OUTPUT/report.md: the calibration and decoding tables with their captions."""
    ours = component_rows(results, "ours")
    unfitted = [f"{model}/{name}" for model, name, entry in ours if entry["calibration"]["temperature"] is None]
    without = [f"{model}/{name} ({entry['factory']})" for model, name, entry in component_rows(results, "none")]
    steps = (
        sorted({entry["threshold"]["step"] for *_, entry in ours}),
        sorted({entry["posterior"]["step"] for *_, entry in ours}),
    )
    seed = "" if results["seed"] is None else f" (pipelines of training seed {results['seed']})"
    lines = [
        f"# Confidence study ({machine()})",
        "",
        f"Dev: {Path(results['dev']).name}, test: {Path(results['test']).name}{seed}. Every setting is chosen on dev; "
        "test is only measured.",
        "",
        "## Calibration",
        "",
        f"ECE (fraction, {results['bins']} equal-width bins of span probability; a span is correct when its boundaries and "
        "label match a gold span). Before: T = 1 (the model's own scores); after: the temperature T fitted on dev for the "
        "negative log-likelihood of the MAP spans' correctness (threshold 0); per label: then a temperature per label "
        'of the scores ("O": the outside score) by coordinate descent on the same objective, among the settings whose '
        "MAP spans have a dev F1 at least that at T (T still divides the scores of no label; unlike T, they change the "
        "MAP spans). Chosen: per label iff it lowers the dev ECE; "
        "the decoding below uses the chosen temperatures. spancat rows: its own scores and threshold, no temperature "
        "(it has none), to compare with the ECE after scaling. Test floor: the mean ECE of a perfectly calibrated model "
        "with the chosen test spans' probabilities (each span correct with its probability, 200 draws); ECE is biased "
        "upwards on a finite sample, so read an ECE against it.",
        "",
        calibration_table(results),
        "",
    ]
    if unfitted:
        lines += [f"No temperature fitted (no span predicted on dev): {', '.join(unfitted)}.", ""]
    if without:
        lines += [f"No span probabilities: {', '.join(without)}.", ""]
    lines += [
        "## Decoding",
        "",
        "P/R/F in percent on test, F1 on dev beside each choice, all at the chosen temperatures. MAP: the most probable analysis, "
        f"threshold 0. t: the probability threshold on the MAP spans with the best dev F1 (step {', '.join(map(str, steps[0]))}). "
        "c: the posterior_penalty of posterior (minimum-Bayes-risk) decoding with the best dev F1 (grid "
        f"step, ..., 1 - step, step {', '.join(map(str, steps[1]))}). Reliability diagrams and P/R curves: png/.",
        "",
        decoding_table(results),
        "",
    ]
    return "\n".join(lines)


def confidence(
    model: List[str] = typer.Option(
        ...,
        help="NAME=PIPELINE (repeatable): a model to study and its pipeline folder; "
        "{seed} in the path is replaced by the first of --seeds",
    ),
    dev: Path = typer.Option(
        ...,
        help="Dev data file (every choice is made on it): .jsonl (GENIA), .conllu (UD "
        "English-GUM, or UD English-EWT with --dev-uner) or .spacy (DocBin)",
    ),
    test: Path = typer.Option(..., help="Test data file (only measured), of the same kinds"),
    dev_uner: Optional[Path] = typer.Option(None, help="UNER IOB2 entities of a UD CoNLL-U --dev file"),
    test_uner: Optional[Path] = typer.Option(None, help="UNER IOB2 entities of a UD CoNLL-U --test file"),
    output: Path = typer.Option(..., help="Folder for confidence.json, report.md and png/"),
    component: Optional[str] = typer.Option(None, help="Study this component only (default: every span-writing one)"),
    penalty_step: float = typer.Option(0.05, help="Step of the posterior penalties tried: step, ..., 1 - step"),
    threshold_step: float = typer.Option(0.01, help="Step of the thresholds tried: 0, step, ..., 1"),
    seeds: str = typer.Option(
        "0", help="Training seeds, e.g. 0,1,2: the first (smallest) replaces {seed} in the paths"
    ),
    parser: Optional[Path] = typer.Option(None, help="Parser pipeline whose trees replace the data's gold trees"),
    bins: int = typer.Option(DEFAULT_BINS, min=1, help="Equal-width probability bins of the ECE"),
) -> None:
    """Calibration (temperature), probability threshold and posterior
    decoding of the entity components of each --model, chosen on --dev and
    measured on --test; prints OUTPUT/report.md."""
    seed = parse_seeds(seeds)[0]
    models = parse_models(model, seed)
    used = seed if any(SEED_MARK in spec for spec in model) else None
    confidence_study(
        models,
        DataFile(dev, dev_uner),
        DataFile(test, test_uner),
        output,
        component,
        penalty_step,
        threshold_step,
        parser,
        bins,
        used,
    )
    typer.echo((output / "report.md").read_text(encoding="utf8"))
