"""The confidence settings every entity component shares (factory
arguments, read from the config at every load), declared once: their
defaults and types, the decorator that adds them to a factory, and the
checks that refuse a bad value with the component, the setting, the value
and the range.

* ``temperature`` (> 0): the scores are divided by it before decoding.
* ``label_temperatures`` ({label: temperature > 0}): the divisor of that
  label's scores instead ("O" for the outside column of ``dgm_ner``).
* ``threshold`` (in [0, 1]): mentions with a lower marginal are dropped.
* ``decoding``: "map" (the most probable analysis) or "posterior" (the
  analysis with the most expected correct mentions minus
  ``posterior_penalty`` each).
* ``posterior_penalty`` (>= 0): with ``decoding = "posterior"``, the cost of
  each predicted mention (higher: fewer, surer mentions); "map" ignores it.
* ``overwrite_ents`` (bool): false (the default, as spaCy's ``ner``): the
  entities a Doc already has in ``doc.ents`` (an entity ruler's) are kept
  and decoding is conditioned on them; true: they are replaced.

A threshold above 0 or posterior decoding computes the marginals even with
``probabilities = false``.
"""

import inspect
from typing import Callable, Dict, Literal, Optional, Sequence

import numpy as np
from thinc.api import get_array_module

from ..util.numbers import is_finite_number

# The confidence settings of every entity component, with their defaults (factory arguments).
CONFIDENCE_DEFAULTS = {
    "temperature": 1.0,
    "label_temperatures": {},
    "threshold": 0.0,
    "decoding": "map",
    "posterior_penalty": 0.5,
    "overwrite_ents": False,
}
DECODINGS = ("map", "posterior")
CONFIDENCE_TYPES = {  # spaCy's config validation reads them: a wrong value is a ConfigValidationError
    "temperature": float,
    "label_temperatures": Dict[str, float],
    "threshold": float,
    "decoding": Literal[DECODINGS],
    "posterior_penalty": float,
    "overwrite_ents": bool,
}


def confidence_factory(make: Callable) -> Callable:
    """A component factory ``make(nlp, name, ..., **confidence)`` with the
    confidence settings as keyword parameters of its signature, which
    spaCy's config validation reads (put it below ``Language.factory``)."""
    signature = inspect.signature(make)
    parameters = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    parameters += [
        inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=CONFIDENCE_TYPES[key])
        for key, default in CONFIDENCE_DEFAULTS.items()
    ]
    make.__signature__ = signature.replace(parameters=parameters)
    make.__annotations__ = {**make.__annotations__, **CONFIDENCE_TYPES}
    return make


def check_label_temperatures(name: str, label_temperatures: object, allowed: Optional[Sequence[str]] = None) -> None:
    """ValueError unless ``label_temperatures`` maps labels (strings) to
    finite temperatures > 0 and, when ``allowed`` (the labels of the
    component's score columns) is given, every key is one of them.
    ``name``: the component."""
    if not isinstance(label_temperatures, dict):
        raise ValueError(
            f"'{name}' has label_temperatures = {label_temperatures!r}: give a mapping of label to "
            'temperature, e.g. {"ORG": 2.0} ({} for none)'
        )
    for label, value in label_temperatures.items():
        if not isinstance(label, str) or not is_finite_number(value) or value <= 0:
            raise ValueError(
                f"'{name}' has label_temperatures[{label!r}] = {value!r}: each key must be a label and "
                "each value a finite number > 0"
            )
    unknown = [] if allowed is None else [label for label in label_temperatures if label not in allowed]
    if unknown:
        raise ValueError(
            f"'{name}' has label_temperatures[{unknown[0]!r}], but {unknown[0]!r} is not a label of its "
            f"scores: use the keys {sorted(set(allowed))} (or remove it)"
        )


def check_confidence(name: str, settings: Dict[str, object]) -> None:
    """ValueError unless ``settings`` hold valid confidence settings:
    ``temperature`` finite and > 0, ``label_temperatures`` labels to finite
    values > 0 (the keys are checked against the labels by
    ``EntityPipe.column_temperatures``), ``threshold`` in [0, 1],
    ``decoding`` "map" or "posterior", ``posterior_penalty`` finite and >=
    0. ``name``: the component."""

    def number(key: str) -> float:
        value = settings[key]
        if not is_finite_number(value):
            raise ValueError(f"'{name}' has {key} = {value!r}: it must be a finite number")
        return float(value)

    check_label_temperatures(name, settings["label_temperatures"])
    if number("temperature") <= 0:
        raise ValueError(
            f"'{name}' has temperature = {settings['temperature']!r}: it must be > 0 (1.0: the model's "
            "own probabilities; above 1 flatter, below 1 sharper)"
        )
    if not 0.0 <= number("threshold") <= 1.0:
        raise ValueError(
            f"'{name}' has threshold = {settings['threshold']!r}: it must lie in [0, 1] (0 keeps every predicted span)"
        )
    if settings["decoding"] not in DECODINGS:
        raise ValueError(
            f"'{name}' has decoding = {settings['decoding']!r}: use \"map\" (the most probable analysis) "
            'or "posterior" (the analysis with the most expected correct spans minus posterior_penalty each)'
        )
    if number("posterior_penalty") < 0:
        raise ValueError(
            f"'{name}' has posterior_penalty = {settings['posterior_penalty']!r}: it must be >= 0 "
            "(0.5 predicts the spans more likely right than wrong)"
        )


class ConfidenceSettings:
    """The confidence settings applied to a component's scores and
    predictions (a mixin of ``EntityPipe``: it reads ``self.settings``,
    ``self.name`` and ``self.score_labels()``)."""

    def column_temperatures(self) -> np.ndarray:
        """(C,) the temperature of each column of ``score_labels``:
        ``label_temperatures.get(label, temperature)``; a ValueError for a
        key that is no column's label."""
        labels = self.score_labels()
        by_label = self.settings["label_temperatures"]
        check_label_temperatures(self.name, by_label, labels)
        return np.array([by_label.get(label, self.settings["temperature"]) for label in labels], dtype=np.float64)

    def tempered(self, output):
        """The model's ``output`` (an array, a number, or a tuple of them)
        divided by the temperatures: each column (axis 1) of the score array
        (the output, or its first part) by its label's
        (``column_temperatures``), every other part by
        ``settings["temperature"]``; unchanged at temperature 1 without
        ``label_temperatures``."""
        check_confidence(self.name, self.settings)
        temperature = self.settings["temperature"]
        if temperature == 1.0 and not self.settings["label_temperatures"]:
            return output
        scores, *others = output if isinstance(output, tuple) else (output,)
        divisors = self.column_temperatures()
        if scores.ndim < 2 or scores.shape[1] != divisors.shape[0]:
            raise ValueError(
                f"'{self.name}': scores of shape {tuple(scores.shape)} for the {divisors.shape[0]} score "
                f"columns {self.score_labels()}: initialize the component again"
            )
        shape = (1, -1) + (1,) * (scores.ndim - 2)
        scores = scores / get_array_module(scores).asarray(divisors, dtype=scores.dtype).reshape(shape)
        if not isinstance(output, tuple):
            return scores
        return (scores, *(part / temperature for part in others))

    @property
    def needs_marginals(self) -> bool:
        """Whether prediction computes the marginals: for ``attrs["scores"]``,
        a threshold above 0 or posterior decoding."""
        return bool(self.settings["probabilities"] or self.mentions_need_marginals)

    @property
    def mentions_need_marginals(self) -> bool:
        """Whether the predicted mentions depend on the marginals: a threshold
        above 0 or posterior decoding."""
        return bool(self.settings["threshold"] > 0 or self.settings["decoding"] == "posterior")

    def confident(self, probabilities: Optional[np.ndarray], *arrays: np.ndarray):
        """The rows of ``arrays`` (each (M, ...)) and of ``probabilities`` (M,)
        whose probability is at least ``settings["threshold"]``, compared as
        ``attrs["scores"]`` holds them (float32): (probabilities, *arrays).
        Everything is kept at threshold 0 (or without probabilities)."""
        threshold = self.settings["threshold"]
        if probabilities is None or threshold <= 0:
            return (probabilities, *arrays)
        kept = np.asarray(probabilities, dtype=np.float32) >= np.float32(threshold)
        return (np.asarray(probabilities)[kept], *(np.asarray(array)[kept] for array in arrays))

    def written_scores(self, probabilities: Optional[np.ndarray]) -> Optional[np.ndarray]:
        """What goes to ``attrs["scores"]``: the probabilities with the setting
        ``probabilities``, else None."""
        return probabilities if self.settings["probabilities"] else None
