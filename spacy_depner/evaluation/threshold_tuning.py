"""The probability ``threshold`` of an entity component chosen on
development data: the spans decoded once at threshold 0 are filtered by
probability at each threshold of a grid (``setting_search.grid_search``)
for the best F1, and the precision/recall curve drawn. Or its
``posterior_penalty`` (``decoding = "posterior"``): the model scores the
data once and each penalty of the grid decodes its marginals again."""

from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..util.pipelines import load_pipeline
from .component_decoding import component_inputs, decode, probability_key, settings_applied, tunable_component
from .data_files import file_examples
from .figures import matplotlib_pyplot, save_png
from .metrics import prf
from .pipeline_output import check_output, kept_or_tuned, save_pipeline
from .setting_search import grid_search, grid_values
from .span_judging import judge, judged_prf

TUNED_SETTINGS = ("threshold", "posterior_penalty")  # the settings find-threshold searches


def threshold_counts(
    probabilities: np.ndarray, correct: np.ndarray, n_gold: int, thresholds: Sequence[float]
) -> np.ndarray:
    """(V, 3) (TP, FP, FN) of the spans kept at each threshold t (those with
    probability >= t, compared in float32 as ``attrs["scores"]`` holds the
    probabilities and as the components filter them): ``probabilities``
    (M,), ``correct`` (M,) bool, ``n_gold`` gold spans."""
    probabilities = np.asarray(probabilities, dtype=np.float32)
    order = np.argsort(probabilities, kind="stable")
    below = np.searchsorted(probabilities[order], np.asarray(thresholds, dtype=np.float32), side="left")
    correct_below = np.concatenate([[0], np.cumsum(correct[order])])[below]
    tp = int(correct.sum()) - correct_below
    fp = (probabilities.shape[0] - below) - tp
    return np.stack([tp, fp, n_gold - tp], axis=1).astype(np.int64)


def tune_threshold(
    probabilities: np.ndarray, correct: np.ndarray, n_gold: int, step: float = 0.01, before: float = 0.0
) -> Tuple[Dict[str, float], List[Dict[str, float]]]:
    """The threshold of 0, step, ..., 1 with the best F1 of the spans it keeps
    (``grid_search``): ``tuned_*`` (threshold, p, r, f) and ``before_*``
    (those at the threshold ``before``), and the curve of every threshold."""
    if not 0 < step <= 1:
        raise ValueError(f"the threshold step must be in (0, 1], not {step}")
    probabilities, correct = np.asarray(probabilities, dtype=np.float64), np.asarray(correct, dtype=bool)

    def scores(threshold: float) -> Dict[str, float]:
        return prf(*(int(c) for c in threshold_counts(probabilities, correct, n_gold, [threshold])[0]))

    best, curve = grid_search(grid_values(0.0, 1.0, step), scores, "threshold")
    result = {
        **{f"tuned_{k}": v for k, v in best.items()},
        **{f"before_{k}": v for k, v in {"threshold": float(before), **scores(before)}.items()},
    }
    return result, curve


def tune_posterior_penalty(
    pipe, docs: Sequence, gold, step: float = 0.01, batch_size: int = 256
) -> Tuple[Dict[str, float], List[Dict[str, float]]]:
    """The ``posterior_penalty`` of 0, step, ..., 1 with the best F1 of the
    spans that posterior decoding predicts (``grid_search``) on ``docs``,
    the component ``pipe``'s inputs (``component_inputs``), against ``gold``
    (``file_examples``): ``tuned_*`` (posterior_penalty, p, r, f) and
    ``before_*`` (those of the pipe's own decoding: ``before_decoding``,
    and ``before_posterior_penalty`` None under MAP decoding), and the curve of every penalty. The model scores each batch once
    (``problem``); each penalty decodes it again (``solve``) and writes
    copies of the Docs as the component does."""
    if not 0 < step <= 1:
        raise ValueError(f"the posterior_penalty step must be in (0, 1], not {step}")
    docs = list(docs)
    chunks = [docs[i : i + batch_size] for i in range(0, len(docs), batch_size)]
    problems = [pipe.problem(chunk) for chunk in chunks]
    forced = {"probabilities": True} if "probabilities" in pipe.settings else {}

    def scores(**settings) -> Dict[str, float]:
        annotated = []
        with settings_applied(pipe, **forced, **settings):
            for chunk, problem in zip(chunks, problems):
                copies = [doc.copy() for doc in chunk]
                pipe.set_annotations(copies, pipe.solve(problem))
                annotated.extend(copies)
        _, correct, n_gold = judge(annotated, gold, pipe.spans_key, pipe.name)
        return judged_prf(correct, n_gold)

    decoding = pipe.settings["decoding"]
    penalty = float(pipe.settings["posterior_penalty"]) if decoding == "posterior" else None
    before = {"decoding": decoding, "posterior_penalty": penalty, **scores()}
    best, curve = grid_search(
        grid_values(0.0, 1.0, step),
        lambda value: scores(decoding="posterior", posterior_penalty=value),
        "posterior_penalty",
    )
    return {**{f"tuned_{k}": v for k, v in best.items()}, **{f"before_{k}": v for k, v in before.items()}}, curve


def threshold_png(
    curve: List[Dict[str, float]], chosen: float, path: Path, title: str = "", setting: str = "threshold"
) -> Path:
    """Draw P, R and F1 against the ``setting`` (left) and the precision/recall
    curve (right, the values with recall > 0) of ``tune_threshold``'s
    (or ``tune_posterior_penalty``'s) curve to the PNG ``path``, the chosen value marked on both."""
    plt = matplotlib_pyplot()
    t, p, r, f = (np.array([record[k] for record in curve]) for k in (setting, "p", "r", "f"))
    at = int(np.argmin(np.abs(t - chosen)))
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
    for values, name in ((p, "precision"), (r, "recall"), (f, "F1")):
        left.plot(t, values, label=name)
    left.axvline(chosen, color="gray", linestyle="--", label=f"chosen {chosen:g}")
    left.set(xlim=(0, 1), ylim=(0, 1.02), xlabel=setting, ylabel="fraction")
    left.legend(loc="lower left")
    found = r > 0  # the thresholds that keep a correct span (else the precision is 0 by convention)
    right.plot(r[found], p[found], ".-", markersize=3)
    right.plot([r[at]], [p[at]], "o", color="tab:red", label=f"{setting} {chosen:g}: F1 {f[at]:.3f}")
    right.set(xlim=(0, 1.02), ylim=(0, 1.02), xlabel="recall", ylabel="precision")
    right.legend(loc="lower left")
    if title:
        figure.suptitle(title)
    return save_png(figure, path)


def tune_component_setting(
    nlp,
    name: str,
    examples: Sequence,
    gold,
    setting: str = "threshold",
    step: float = 0.01,
    force: bool = False,
) -> Tuple[Dict[str, object], List[Dict[str, float]], Dict[str, object]]:
    """The ``setting`` (of ``TUNED_SETTINGS``) of the component ``name`` of
    ``nlp`` chosen for the best F1 of its spans on ``examples`` against
    ``gold`` (``file_examples``'s), the other components annotating the
    inputs once: the threshold by ``tune_threshold`` from one decoding at
    threshold 0, the posterior penalty by ``tune_posterior_penalty``.
    Returns the search's result (with ``spans``, the spans judged, for the
    threshold, and ``chosen``), its curve, and the settings it chose (set on
    the component): none when the component's own settings score higher on
    the data, unless ``force`` (``kept_or_tuned``)."""
    if setting not in TUNED_SETTINGS:
        raise ValueError(f"the setting tuned is one of {TUNED_SETTINGS}, not {setting!r}")
    pipe = nlp.get_pipe(name)
    inputs = component_inputs(nlp, name, examples)
    if setting == "posterior_penalty":
        result, curve = tune_posterior_penalty(pipe, inputs, gold, step)
        tuned = {"decoding": "posterior", "posterior_penalty": result["tuned_posterior_penalty"]}
    else:
        forced = {"threshold": 0.0, **({"probabilities": True} if "probabilities" in pipe.settings else {})}
        probabilities, correct, n_gold = judge(decode(pipe, inputs, **forced), gold, probability_key(nlp, name), name)
        result, curve = tune_threshold(probabilities, correct, n_gold, step, pipe.settings["threshold"])
        result = {"spans": int(probabilities.shape[0]), **result}
        tuned = {"threshold": result["tuned_threshold"]}
    tuned = kept_or_tuned(result, tuned, force)
    pipe.settings.update(tuned)
    return result, curve, tuned


def tune_pipeline_threshold(
    model: Path,
    dev: Path,
    output: Optional[Path],
    component: Optional[str] = None,
    step: float = 0.01,
    png: Optional[Path] = None,
    uner: Optional[Path] = None,
    spans_key: Optional[str] = None,
    parser: Optional[Path] = None,
    setting: str = "threshold",
    force: bool = False,
) -> Dict[str, object]:
    """Set the ``threshold`` (or, with ``setting = "posterior_penalty"``,
    ``decoding = "posterior"`` and its ``posterior_penalty``) of a component
    of the pipeline at ``model`` for the best F1 of its spans on the data
    file ``dev`` (``file_examples``; ``tune_component_setting``).
    Saves the pipeline with the tuned value to ``output`` (may be
    ``model``; None: not saved), or with its own settings when they score
    higher on ``dev`` (unless ``force``: ``result["chosen"]``) and, with ``png``, draws the precision/recall curve there."""
    if setting not in TUNED_SETTINGS:
        raise ValueError(f"the setting tuned is one of {TUNED_SETTINGS}, not {setting!r}")
    if output is not None:
        check_output(output)
    nlp = load_pipeline(model)
    name = tunable_component(nlp, model, component, setting)
    examples, gold = file_examples(nlp, dev, uner, spans_key, parser)
    result, curve, tuned = tune_component_setting(nlp, name, examples, gold, setting, step, force)
    if png is not None:
        threshold_png(curve, result[f"tuned_{setting}"], png, f"{name} on {Path(dev).name}", setting)
    if output is not None:
        save_pipeline(nlp, name, tuned, output)
    spans = {"spans": result.pop("spans")} if "spans" in result else {}
    return {
        "component": name,
        **spans,
        "gold": sum(len(g) for g in gold),
        **result,
        **({"png": str(png)} if png is not None else {}),
    }
