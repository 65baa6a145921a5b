"""How well span probabilities are calibrated, and the temperature that
calibrates them.

The unit of judgement is a predicted span with its label and its
probability (the marginal a component writes to ``attrs["scores"]``); it is
correct when its boundaries and label match a gold span exactly. A
probability p is calibrated when, among the spans given p, a fraction p is
correct.

* ``reliability_bins``: the spans in equal-width bins of probability, with
  each bin's count, mean probability (confidence) and accuracy;
* ``expected_calibration_error`` (ECE): sum over bins b of
  ``|b| / n * |accuracy(b) - confidence(b)|``;
* ``ece_floor``: the ECE a perfectly calibrated model would show with the
  same probabilities and number of spans (ECE is biased upwards on a finite
  sample: about 0.037 for 870 spans at EWT's probabilities), to read an
  ECE against;
* ``span_nll``: the mean negative log-likelihood of the spans' correctness;
* ``fit_temperature``: the one scalar T that minimises that negative
  log-likelihood when the model's scores are divided by T (log-spaced grid,
  then golden-section search); ``fit_component_temperature``: that fit for
  one component of a pipeline, on inputs the other components annotated
  (``decoded_nll_f1``); ``label_temperatures`` fits one per label after it and
  saves them (``calibrate``);
* ``reliability_png``: the reliability diagram (matplotlib, imported only
  when a diagram is drawn);
* ``calibration_report``: the same on trained pipelines and data files
  (``python -m spacy_depner calibration-report``).
"""

import math
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..pipeline.entity_pipe import entity_factories
from ..util.numbers import is_positive_int
from ..util.pipelines import load_pipeline
from ..util.progress import progress
from .component_decoding import decode, probability_key, require_component
from .data_files import data_kind, file_examples
from .figures import matplotlib_pyplot, save_png
from .span_judging import judge, judged_prf

DEFAULT_BINS = 15
# Probabilities are clipped to [EPSILON, 1 - EPSILON] in the log-likelihood:
# a wrong span given probability 1 (float32 marginals round to it) costs
# -log(EPSILON), not infinity.
EPSILON = 1e-7
TEMPERATURE_RANGE = (0.05, 20.0)
GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def judged(probabilities, correct) -> Tuple[np.ndarray, np.ndarray]:
    """``probabilities`` (M,) as float64 and ``correct`` (M,) as bool,
    checked: one correctness per probability, every probability finite and
    in [0, 1], and correctness given as booleans or 0/1."""
    p = np.asarray(probabilities, dtype=np.float64).reshape(-1)
    raw = np.asarray(correct).reshape(-1)
    if p.shape != raw.shape:
        raise ValueError(f"{p.shape[0]} probabilities but {raw.shape[0]} correctness values: give one per span")
    bad = np.flatnonzero(~np.isfinite(p) | (p < 0.0) | (p > 1.0))
    if bad.size:
        raise ValueError(
            f"span probability {p[bad[0]]!r} (span {bad[0]}) is not in [0, 1]: "
            "give the spans' marginal probabilities, not raw scores"
        )
    if raw.dtype != bool and not np.isin(raw, (0, 1)).all():
        raise ValueError("the correctness of a span must be a boolean (or 0/1)")
    return p, raw.astype(bool)


def check_bins(n_bins: int) -> int:
    """``n_bins`` as an int, or a ValueError unless it is a positive integer."""
    if not is_positive_int(n_bins):
        raise ValueError(f"the number of bins must be a positive integer, not {n_bins!r}")
    return int(n_bins)


def bin_index(probabilities: np.ndarray, n_bins: int) -> np.ndarray:
    """(M,) the equal-width bin of each probability: bin 0 is [0, 1/B],
    bin b > 0 is (b/B, (b+1)/B]."""
    inner_edges = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    return np.searchsorted(inner_edges, probabilities, side="left")


def reliability_bins(probabilities, correct, n_bins: int = DEFAULT_BINS) -> Dict[str, np.ndarray]:
    """Per equal-width bin of probability (B = ``n_bins``): ``lower``,
    ``upper`` (B,) its edges, ``count`` (B,) its spans, ``confidence`` (B,)
    their mean probability and ``accuracy`` (B,) the fraction correct (both
    0 in an empty bin: read them with ``count``)."""
    n_bins = check_bins(n_bins)
    p, right = judged(probabilities, correct)
    index = bin_index(p, n_bins)
    count = np.bincount(index, minlength=n_bins)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        confidence = np.where(count > 0, np.bincount(index, weights=p, minlength=n_bins) / np.maximum(count, 1), 0.0)
        accuracy = np.where(count > 0, np.bincount(index, weights=right, minlength=n_bins) / np.maximum(count, 1), 0.0)
    return {"lower": edges[:-1], "upper": edges[1:], "count": count, "confidence": confidence, "accuracy": accuracy}


def ece_of_bins(bins: Dict[str, np.ndarray]) -> float:
    """The expected calibration error of ``reliability_bins``' output: sum
    over bins of ``|bin| / n * |accuracy - confidence|`` (0 without spans)."""
    n = int(bins["count"].sum())
    if n == 0:
        return 0.0
    return float(np.sum(bins["count"] / n * np.abs(bins["accuracy"] - bins["confidence"])))


def expected_calibration_error(probabilities, correct, n_bins: int = DEFAULT_BINS) -> float:
    """ECE with ``n_bins`` equal-width bins of probability:
    ``sum_b |b| / n * |accuracy(b) - confidence(b)|``, where ``|b|`` is the
    number of spans whose probability falls in bin b, n the number of spans,
    accuracy(b) the fraction of them that are correct and confidence(b) their
    mean probability. 0 for perfectly calibrated bins; 1 for spans all
    given probability 1 and all wrong. ``probabilities`` (M,) in [0, 1],
    ``correct`` (M,) booleans; 0 when M = 0."""
    return ece_of_bins(reliability_bins(probabilities, correct, n_bins))


def ece_floor(probabilities, n_bins: int = DEFAULT_BINS, draws: int = 200, seed: int = 0) -> float:
    """The mean ECE over ``draws`` outcomes in which each span is correct
    with exactly its probability (Bernoulli(p), numpy generator ``seed``):
    the ECE of a perfectly calibrated model with these ``probabilities``
    (M,), which is above 0 from sampling alone (about sqrt(p(1-p)/M) per
    bin). 0 without spans."""
    p, _ = judged(probabilities, np.zeros(np.size(probabilities), dtype=bool))
    if p.size == 0:
        return 0.0
    if not is_positive_int(draws):
        raise ValueError(f"the number of draws must be a positive integer, not {draws!r}")
    rng = np.random.default_rng(seed)
    return float(np.mean([expected_calibration_error(p, rng.random(p.size) < p, n_bins) for _ in range(draws)]))


def span_nll(probabilities, correct) -> float:
    """Mean negative log-likelihood of the spans' correctness under their
    probabilities: ``-mean(log p if correct else log(1 - p))``, p clipped to
    [EPSILON, 1 - EPSILON]. A ValueError without spans (nothing to fit)."""
    p, right = judged(probabilities, correct)
    if p.size == 0:
        raise ValueError("no predicted spans: the log-likelihood of their correctness is undefined")
    p = np.clip(p, EPSILON, 1.0 - EPSILON)
    return float(-np.mean(np.where(right, np.log(p), np.log1p(-p))))


def bins_as_records(bins: Dict[str, np.ndarray]) -> List[Dict[str, object]]:
    """The bins as JSON-able records ``{lower, upper, count, confidence,
    accuracy}``, confidence and accuracy None in an empty bin."""
    return [
        {
            "lower": round(float(lo), 6),
            "upper": round(float(hi), 6),
            "count": int(n),
            "confidence": float(c) if n else None,
            "accuracy": float(a) if n else None,
        }
        for lo, hi, n, c, a in zip(bins["lower"], bins["upper"], bins["count"], bins["confidence"], bins["accuracy"])
    ]


def calibration_summary(probabilities, correct, n_bins: int = DEFAULT_BINS) -> Dict[str, object]:
    """``spans``, ``correct``, ``mean_confidence``, ``accuracy``, ``ece``,
    ``ece_floor``, ``nll`` (None without spans) and the ``reliability`` bins
    (records) of judged spans."""
    p, right = judged(probabilities, correct)
    bins = reliability_bins(p, right, n_bins)
    return {
        "spans": int(p.size),
        "correct": int(right.sum()),
        "mean_confidence": float(p.mean()) if p.size else None,
        "accuracy": float(right.mean()) if p.size else None,
        "ece": ece_of_bins(bins),
        "ece_floor": ece_floor(p, n_bins),
        "nll": span_nll(p, right) if p.size else None,
        "reliability": bins_as_records(bins),
    }


def check_temperature_range(low: float, high: float) -> None:
    """A ValueError unless 0 < low < high, both finite."""
    if not (np.isfinite(low) and np.isfinite(high) and 0.0 < low < high):
        raise ValueError(f"the temperature range needs 0 < low < high, not low={low}, high={high}")


def fit_temperature(
    nll_at: Callable[[float], float],
    low: float = TEMPERATURE_RANGE[0],
    high: float = TEMPERATURE_RANGE[1],
    grid: int = 9,
    tolerance: float = 1e-3,
) -> Tuple[float, float, List[Tuple[float, float]]]:
    """The temperature T in [low, high] with the smallest ``nll_at(T)`` (the
    negative log-likelihood of the spans' correctness when the model's
    scores are divided by T): ``grid`` log-spaced values, then a
    golden-section search in log T between the best one's neighbours, until
    the bracket is narrower than ``tolerance`` in log T. Returns (T, its
    negative log-likelihood, every (T, nll) evaluated in order); the first
    best on ties. Each evaluation is one decoding of the data; ``nll_at``
    may return +inf where there is nothing to judge (never the best unless
    every value is)."""
    check_temperature_range(low, high)
    if grid < 3:
        raise ValueError(f"the temperature grid needs at least 3 values, not {grid}")
    if not tolerance > 0:
        raise ValueError(f"the tolerance must be > 0, not {tolerance}")
    tried: List[Tuple[float, float]] = []

    def evaluate(log_t: float) -> float:
        value = float(nll_at(float(math.exp(log_t))))
        if np.isnan(value) or value == -math.inf:
            raise ValueError(f"the negative log-likelihood at temperature {math.exp(log_t):.4g} is {value}")
        tried.append((float(math.exp(log_t)), value))
        return value

    logs = np.linspace(math.log(low), math.log(high), grid)
    values = [evaluate(x) for x in logs]
    best = int(np.argmin(values))
    a, b = logs[max(best - 1, 0)], logs[min(best + 1, grid - 1)]
    c, d = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
    fc, fd = evaluate(c), evaluate(d)
    while b - a > tolerance:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - GOLDEN * (b - a)
            fc = evaluate(c)
        else:
            a, c, fc = c, d, fd
            d = a + GOLDEN * (b - a)
            fd = evaluate(d)
    t, value = min(tried, key=lambda item: item[1])
    return t, value, tried


def reliability_png(bins: Dict[str, np.ndarray], path: Path, title: str = "") -> Path:
    """Draw the reliability diagram of ``reliability_bins``' output to the
    PNG ``path``: each non-empty bin's accuracy as a bar over its range, its
    mean confidence as a dot, the diagonal of perfect calibration, the ECE
    and the number of spans in the title."""
    plt = matplotlib_pyplot()
    figure, axes = plt.subplots(figsize=(5, 5))
    filled = bins["count"] > 0
    widths = bins["upper"] - bins["lower"]
    axes.bar(
        bins["lower"][filled],
        bins["accuracy"][filled],
        width=widths[filled],
        align="edge",
        edgecolor="black",
        alpha=0.7,
        label="accuracy",
    )
    axes.plot(
        (bins["lower"] + widths / 2)[filled], bins["confidence"][filled], "o", color="tab:red", label="mean confidence"
    )
    axes.plot([0, 1], [0, 1], "--", color="gray", label="calibrated")
    axes.set(xlim=(0, 1), ylim=(0, 1), xlabel="span probability", ylabel="fraction of spans correct")
    n = int(bins["count"].sum())
    axes.set_title(f"{title}{': ' if title else ''}ECE {ece_of_bins(bins):.3f}, {n} spans")
    axes.legend(loc="upper left")
    return save_png(figure, path)


def spans_summary(
    probabilities: np.ndarray,
    correct: np.ndarray,
    n_gold: int,
    n_bins: int = DEFAULT_BINS,
    png: Optional[Path] = None,
    title: str = "",
) -> Dict[str, object]:
    """``calibration_summary`` of judged spans with ``gold`` and their P/R/F,
    and with ``png`` the reliability diagram drawn there."""
    summary = {
        **calibration_summary(probabilities, correct, n_bins),
        "gold": int(n_gold),
        **judged_prf(correct, n_gold),
    }
    if png is not None:
        reliability_png(reliability_bins(probabilities, correct, n_bins), png, title)
        summary["png"] = str(png)
    return summary


def data_files(data: Sequence[Path], uner: Sequence[Path] = ()) -> List[Tuple[Path, Optional[Path]]]:
    """Each data file with its UNER IOB2 file: the k-th of ``uner`` goes with
    the k-th .conllu file of ``data`` (then every .conllu file needs one);
    a ValueError for a file of unknown kind (``data_kind``)."""
    if not data:
        raise ValueError("give at least one data file")
    conllu = [i for i, path in enumerate(data) if Path(path).suffix.lower() == ".conllu"]
    if uner and len(uner) != len(conllu):
        raise ValueError(
            f"{len(uner)} UNER files for {len(conllu)} CoNLL-U data files: give one --iob2 per "
            "UD CoNLL-U file, in the same order (none for GUM files)"
        )
    paired = dict(zip(conllu, uner)) if uner else {}
    files = [(Path(path), paired.get(i)) for i, path in enumerate(data)]
    for path, iob2 in files:
        data_kind(path, iob2)
    return files


def span_writers(nlp, component: Optional[str], model: Path) -> List[str]:
    """``[component]`` (checked), or every component that writes doc.ents or doc.spans."""
    if component is not None:
        require_component(nlp, model, component)
        return [component]
    return [name for name in nlp.pipe_names if {"doc.ents", "doc.spans"} & set(nlp.get_pipe_meta(name).assigns)]


def png_names(names: Sequence[str], files: Sequence[Path]) -> Dict[Tuple[str, int], str]:
    """PNG file names per (component, file index): COMPONENT-STEM.png (the
    index added when two files share a stem), COMPONENT-all.png (-1) for the
    files pooled."""
    stems = [path.stem for path in files]
    unique = [stem if stems.count(stem) == 1 else f"{stem}-{i}" for i, stem in enumerate(stems)]
    return {
        **{(name, i): f"{name}-{stem}.png" for name in names for i, stem in enumerate(unique)},
        **{(name, -1): f"{name}-all.png" for name in names},
    }


def calibration_report(
    model: Path,
    data: Sequence[Path],
    uner: Sequence[Path] = (),
    component: Optional[str] = None,
    spans_key: Optional[str] = None,
    parser: Optional[Path] = None,
    n_bins: int = DEFAULT_BINS,
    png_dir: Optional[Path] = None,
) -> Dict[str, object]:
    """ECE, negative log-likelihood, reliability bins and P/R/F of the spans
    of each span-writing component of the pipeline at ``model`` (or of
    ``component``) on each data file (``data_files.file_examples``) and,
    with several files, on all of them pooled; a component that writes no
    span probabilities (spaCy's ner) is reported with the reason, and a
    pipeline without any is a ValueError. ``png_dir``: one reliability
    diagram per component and file there."""

    n_bins = check_bins(n_bins)
    files = data_files(data, uner)
    nlp = load_pipeline(model)
    names = span_writers(nlp, component, model)
    keys = {name: probability_key(nlp, name) for name in names}
    reasons = {
        name: f"'{name}' ({nlp.get_pipe_meta(name).factory}) writes no span probabilities"
        for name, key in keys.items()
        if key is None
    }
    judged: Dict[str, List] = {name: [] for name in names if name not in reasons}
    for path, iob2 in files:
        if len(reasons) == len(names):
            break
        examples, gold = file_examples(nlp, path, iob2, spans_key, parser)
        docs = list(progress(nlp.pipe([eg.predicted for eg in examples]), len(examples), f"{path.name}"))
        for name in [n for n in judged if n not in reasons]:
            try:
                judged[name].append(judge(docs, gold, keys[name], name))
            except ValueError as error:
                reasons[name] = str(error)
    if len(reasons) == len(names):
        why = "; ".join(reasons.values()) or "no span-writing component"
        raise ValueError(
            f"no component of {model} writes span probabilities ({why}): "
            f"give a pipeline with {entity_factories()}, or spancat"
        )
    pngs = png_names(names, [path for path, _ in files])
    report: Dict[str, object] = {
        "model": str(model),
        "files": [str(path) for path, _ in files],
        "bins": n_bins,
        "components": {},
    }
    for name in names:
        if name in reasons:
            report["components"][name] = {"probabilities": None, "reason": reasons[name]}
            continue
        entry: Dict[str, object] = {"span_group": keys[name], "per_file": []}
        for i, ((path, _), (p, correct, n_gold)) in enumerate(zip(files, judged[name])):
            png = Path(png_dir) / pngs[name, i] if png_dir is not None else None
            entry["per_file"].append(
                {"file": str(path), **spans_summary(p, correct, n_gold, n_bins, png, f"{name} on {path.name}")}
            )
        if len(files) > 1:
            p, correct = (np.concatenate([j[k] for j in judged[name]]) for k in (0, 1))
            png = Path(png_dir) / pngs[name, -1] if png_dir is not None else None
            entry["all"] = spans_summary(p, correct, sum(j[2] for j in judged[name]), n_bins, png, f"{name}, all files")
        report["components"][name] = entry
    return report


def fitting_settings(pipe) -> Dict[str, object]:
    """The settings a temperature is fitted with: span probabilities written
    (``probabilities``, where the component has that setting), no
    ``label_temperatures``, threshold 0 and MAP decoding (its spans do not
    move with one temperature)."""
    return {
        **({"probabilities": True} if "probabilities" in pipe.settings else {}),
        "label_temperatures": {},
        "threshold": 0.0,
        **({"decoding": "map"} if "decoding" in pipe.settings else {}),
    }


def rounded_temperature(temperature: float) -> float:
    """A fitted temperature to 4 significant digits, as it is saved."""
    return float(f"{temperature:.4g}")


def decoded_nll_f1(pipe, docs: Sequence, gold: Sequence, key: str, name: str, **settings) -> Tuple[float, float]:
    """``span_nll`` (+inf when it predicts no span) and F1 of the spans the
    component ``pipe`` (named ``name``, its spans with probabilities in
    ``doc.spans[key]``) predicts on ``docs`` against the ``gold`` spans of
    each, decoded alone with ``fitting_settings`` and then ``settings``:
    one decoding."""
    probabilities, correct, n_gold = judge(
        decode(pipe, docs, **{**fitting_settings(pipe), **settings}), gold, key, name
    )
    return span_nll(probabilities, correct) if probabilities.size else math.inf, judged_prf(correct, n_gold)["f"]


def fit_component_temperature(
    pipe,
    docs: Sequence,
    gold: Sequence,
    key: str,
    name: str,
    where: object,
    low: float = TEMPERATURE_RANGE[0],
    high: float = TEMPERATURE_RANGE[1],
) -> Tuple[float, float, List[Tuple[float, float]]]:
    """``fit_temperature`` of the component ``pipe`` (named ``name``, its
    spans with probabilities in ``doc.spans[key]``) on ``docs``, inputs
    annotated by the other components (``component_inputs``), against the
    ``gold`` spans of each: each temperature tried is one decoding of the
    component alone (``decoded_nll_f1``). Returns (T to 4 significant digits,
    the smallest negative log-likelihood, every (T, nll) tried); a
    ValueError when the component predicts no span on the data ``where``."""

    def nll_at(temperature: float) -> float:
        value, _ = decoded_nll_f1(pipe, docs, gold, key, name, temperature=temperature)
        if value == math.inf:
            raise ValueError(f"'{name}' predicts no span on {where}: there is nothing to fit a temperature on")
        return value

    temperature, nll, tried = fit_temperature(nll_at, low, high)
    return rounded_temperature(temperature), nll, tried
