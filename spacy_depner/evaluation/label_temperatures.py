"""A temperature per label, fitted on development data after the one
temperature, and ``calibrate_pipeline`` (``python -m spacy_depner
calibrate``), which fits and saves them.

Each score column of an entity component belongs to a label
(``EntityPipe.score_labels``: a label, or "O" for an outside score); with
``label_temperatures`` the columns of a label are divided by its own
temperature, the scores of no label (transitions, ``hypergraph_ner``'s
mention penalty) by ``temperature``. ``fit_label_temperatures`` starts from
the one temperature T for every label and lowers the same objective as
``fit_temperature`` (the negative log-likelihood of the correctness of the
MAP spans, threshold 0) by coordinate descent: each label's temperature by
``fit_temperature`` on [T / spread, T * spread] with the others fixed, kept
only when it lowers the objective, for ``sweeps`` sweeps over the labels
(fewer when a sweep changes nothing).

Unlike one temperature, temperatures per label change the MAP spans, and
the objective is judged on the spans predicted: left free, the search
lowers it by predicting other spans rather than by better probabilities
(on UNER English-EWT dev, a chain_ner CRF went from 763 spans at F1 0.62 to
1,580 at F1 0.17 with its NLL from 0.49 to 0.14). So a setting whose MAP
spans have a lower dev F1 than those of the one temperature is not a
candidate (+inf for ``fit_temperature``).

Cost, in decodings of the component alone: 1, then per label and sweep
``LABEL_GRID`` + about 13 (the golden-section search to ``LABEL_TOLERANCE``
in log T): about 18 per label and sweep, 145 for ``dgm_ner`` with three
labels (four columns with "O") and two sweeps, besides the ~27 of the one
temperature.
"""

import math
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np

from ..util.numbers import is_positive_int
from ..util.pipelines import load_pipeline
from .calibration import (
    DEFAULT_BINS,
    TEMPERATURE_RANGE,
    check_temperature_range,
    decoded_nll_f1,
    fit_component_temperature,
    fit_temperature,
    rounded_temperature,
    spans_summary,
)
from .component_decoding import component_inputs, decode, probability_key, tunable_component
from .data_files import file_examples
from .pipeline_output import check_output, kept_or_tuned, save_pipeline
from .span_judging import judge

SWEEPS = 2
# Each label's temperature is searched in [T / LABEL_SPREAD, T * LABEL_SPREAD] around the one temperature T,
# on LABEL_GRID log-spaced values, then by golden section to LABEL_TOLERANCE in log T.
LABEL_SPREAD = 4.0
LABEL_GRID = 5
LABEL_TOLERANCE = 1e-2


def fit_label_temperatures(
    pipe,
    docs: Sequence,
    gold: Sequence,
    key: str,
    name: str,
    temperature: float,
    low: float = TEMPERATURE_RANGE[0],
    high: float = TEMPERATURE_RANGE[1],
    sweeps: int = SWEEPS,
    spread: float = LABEL_SPREAD,
) -> Dict[str, object]:
    """The temperature of each label of the score columns of the component
    ``pipe`` (named ``name``, its spans with probabilities in
    ``doc.spans[key]``) on ``docs`` against the ``gold`` spans of each, by
    coordinate descent from ``temperature`` (the one temperature, which
    still divides the scores of no label), each value within [low, high]
    and to 4 significant digits, among the settings whose MAP spans have a
    dev F1 at least that at ``temperature``. Returns {"label_temperatures":
    {label: T} of the labels whose T is not ``temperature``, "start_nll" and "start_f": the negative
    log-likelihood and F1 at ``temperature``, "nll" and "f": at the label
    temperatures (nll never above start_nll, f never below start_f),
    "sweeps": sweeps run, "decodings": decodings made}."""
    check_temperature_range(low, high)
    if not is_positive_int(sweeps) or not spread > 1.0:
        raise ValueError(f"the per-label fit needs sweeps >= 1 and spread > 1, not sweeps={sweeps}, spread={spread}")
    temperatures = {label: float(temperature) for label in dict.fromkeys(pipe.score_labels())}
    start_nll, start_f = decoded_nll_f1(pipe, docs, gold, key, name, temperature=temperature)
    best, best_f, decodings, run = start_nll, start_f, 1, 0
    f_at: Dict[float, float] = {}  # F1 at each value of the label searched
    search = (max(low, temperature / spread), min(high, temperature * spread))
    for run in range(1, sweeps + 1):
        changed = False
        for label in temperatures:

            def nll_at(t: float, label: str = label) -> float:
                """The objective with this label at ``t``: +inf below the F1 floor."""
                nll, f = decoded_nll_f1(
                    pipe,
                    docs,
                    gold,
                    key,
                    name,
                    temperature=temperature,
                    label_temperatures={**temperatures, label: rounded_temperature(t)},
                )
                f_at[rounded_temperature(t)] = f
                return nll if f >= start_f else math.inf

            f_at.clear()
            t, value, tried = fit_temperature(nll_at, *search, grid=LABEL_GRID, tolerance=LABEL_TOLERANCE)
            decodings += len(tried)
            if value < best:
                temperatures[label], best, changed = rounded_temperature(t), value, True
                best_f = f_at[temperatures[label]]
        if not changed:
            break
    return {
        "label_temperatures": {label: t for label, t in temperatures.items() if t != temperature},
        "start_nll": start_nll,
        "start_f": start_f,
        "nll": best,
        "f": best_f,
        "sweeps": run,
        "decodings": decodings,
    }


ONE_TEMPERATURE = ("temperature", "fit_nll", "decodings", "at_bound")  # the keys of the one temperature's fit


def fit_temperatures(
    pipe,
    docs: Sequence,
    gold: Sequence,
    key: str,
    name: str,
    where: object,
    low: float = TEMPERATURE_RANGE[0],
    high: float = TEMPERATURE_RANGE[1],
    per_label: bool = True,
) -> Dict[str, object]:
    """The one temperature of the component ``pipe`` on ``docs`` against
    ``gold`` (``fit_component_temperature``; a ValueError when it predicts
    no span on the data ``where``) and, with ``per_label``, then the
    temperature per label (``fit_label_temperatures``): {"temperature",
    "fit_nll", "decodings", "at_bound" (T within 1 % of ``low`` or ``high``,
    so a wider range may fit better), and with ``per_label``
    "label_temperatures", "label_fit_nll", "label_sweeps", "label_decodings"}."""
    temperature, nll, tried = fit_component_temperature(pipe, docs, gold, key, name, where, low, high)
    fit: Dict[str, object] = {
        "temperature": temperature,
        "fit_nll": nll,
        "decodings": len(tried),
        "at_bound": bool(np.isclose(temperature, [low, high], rtol=1e-2).any()),
    }
    if per_label:
        by_label = fit_label_temperatures(pipe, docs, gold, key, name, temperature, low=low, high=high)
        fit.update(
            label_temperatures=by_label["label_temperatures"],
            label_fit_nll=by_label["nll"],
            label_sweeps=by_label["sweeps"],
            label_decodings=by_label["decodings"],
        )
    return fit


def calibrate_pipeline(
    model: Path,
    dev: Path,
    output: Path,
    component: Optional[str] = None,
    uner: Optional[Path] = None,
    spans_key: Optional[str] = None,
    parser: Optional[Path] = None,
    low: float = TEMPERATURE_RANGE[0],
    high: float = TEMPERATURE_RANGE[1],
    n_bins: int = DEFAULT_BINS,
    per_label: bool = False,
    force: bool = False,
) -> Dict[str, object]:
    """Fit the ``temperature`` of a component of the pipeline at ``model`` on
    the data file ``dev`` (``fit_temperature``: the negative log-likelihood
    of the correctness of its MAP spans with threshold 0, each temperature
    one decoding of the component alone on inputs annotated once by the
    others) and, with ``per_label``, then its ``label_temperatures``
    (``fit_label_temperatures``; without, they are emptied), save the
    pipeline with them to ``output`` (may be ``model``) and return them
    (4 significant digits; ``at_bound``: T within 1 % of ``low`` or
    ``high``, so a wider range may fit better) with the ECE, negative
    log-likelihood and P/R/F of the spans ``before``, ``after`` the one
    temperature and (``per_label``) ``after_per_label``, as the pipeline's
    settings (threshold, decoding) decode them. The temperatures move the
    spans under a threshold above 0, posterior decoding or label
    temperatures: when the input's own settings score a higher F1 on
    ``dev`` than the fitted ones (``fit_compared``), the pipeline is saved
    with its own, unless ``force`` (``kept_or_tuned``: ``chosen`` in the
    result)."""

    check_temperature_range(low, high)
    check_output(output)
    nlp = load_pipeline(model)
    name = tunable_component(nlp, model, component, "temperature")
    pipe, key = nlp.get_pipe(name), probability_key(nlp, name)
    examples, gold = file_examples(nlp, dev, uner, spans_key, parser)
    docs = component_inputs(nlp, name, examples)
    scores_on = {"probabilities": True} if "probabilities" in pipe.settings else {}
    own_labels = dict(pipe.settings["label_temperatures"])

    def measured() -> Dict[str, object]:
        summary = spans_summary(*judge(decode(pipe, docs, **scores_on), gold, key, name), n_bins)
        return {k: v for k, v in summary.items() if k != "reliability"}

    result: Dict[str, object] = {
        "component": name,
        "file": str(dev),
        "before_temperature": float(pipe.settings["temperature"]),
        "before_label_temperatures": own_labels,
        "before": measured(),
    }
    fit = fit_temperatures(pipe, docs, gold, key, name, dev, low, high, per_label)
    pipe.settings.update(temperature=fit["temperature"], label_temperatures={})
    result.update({k: fit[k] for k in ONE_TEMPERATURE}, after=measured())
    if per_label:
        pipe.settings["label_temperatures"] = fit["label_temperatures"]
        result.update({k: fit[k] for k in fit if k not in ONE_TEMPERATURE}, after_per_label=measured())
    compared = fit_compared(result)
    fitted = {"temperature": fit["temperature"], "label_temperatures": dict(pipe.settings["label_temperatures"])}
    fitted = kept_or_tuned(compared, fitted, force)
    result["chosen"] = compared["chosen"]
    if not fitted:
        pipe.settings.update(temperature=result["before_temperature"], label_temperatures=dict(own_labels))
    save_pipeline(nlp, name, fitted, output)
    return result


def fit_compared(result: Dict[str, object]) -> Dict[str, object]:
    """The figures of ``calibrate_pipeline``'s ``result`` that
    ``kept_or_tuned`` compares: the input's temperature and F1
    (``before_*``) and the fitted temperature with the F1 of the fitted
    settings (``tuned_*``: after the per-label temperatures when fitted)."""
    fitted = result.get("after_per_label", result["after"])
    return {
        "before_temperature": result["before_temperature"],
        "before_f": result["before"]["f"],
        "tuned_temperature": result["temperature"],
        "tuned_f": fitted["f"],
    }
