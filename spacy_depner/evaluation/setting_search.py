"""The one grid search of a decoding setting of a trained pipeline: a
setting's values -> P/R/F of the decoded spans -> the F1-best value, the
first best on ties. Behind the mention penalty of ``hypergraph_ner``
(``penalty_tuning``), the probability ``threshold`` of every entity
component (``threshold_tuning``) and the label temperatures
(``label_temperatures``).
"""

from typing import Callable, Dict, Iterable, List, Tuple

import numpy as np

from ..util.progress import progress


def grid_values(low: float, high: float, step: float) -> np.ndarray:
    """low, low + step, ..., high (rounded to 10 decimals), or a ValueError
    unless step > 0 and low <= high."""
    if not step > 0 or not high >= low:
        raise ValueError(f"need step > 0 and low <= high, not step={step}, low={low}, high={high}")
    return np.round(low + step * np.arange(int(round((high - low) / step)) + 1), 10)


def grid_search(
    values: Iterable[float], score: Callable[[float], Dict[str, float]], setting: str
) -> Tuple[Dict[str, float], List[Dict[str, float]]]:
    """``score(value)`` (P/R/F ``{"p", "r", "f"}``) of each value of a
    setting, in order: the best record ``{setting: value, "p", "r", "f"}``
    by F1 (the first best on ties) and the records of every value."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError(f"no value of {setting} to try")
    curve = [
        {setting: value, **score(value)} for value in progress(values, len(values), f"{setting} search", unit="value")
    ]
    return max(curve, key=lambda record: record["f"]), curve
