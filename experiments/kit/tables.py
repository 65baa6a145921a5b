"""The one markdown table writer of the reports and benchmarks, the one
cell of a figure over training seeds (``mean_sd``, with ``seeds_caption``
for the table's caption), and the machine line of their titles. Library
scores are fractions; reports print them as percents (``percent``, or
``mean_sd(..., scale=100)``)."""

import os
import platform
import statistics
import time
from typing import Dict, List, Optional, Sequence, Union


def percent(value: Optional[float]) -> Optional[float]:
    """A fraction as a percent with 2 decimals (None stays None)."""
    return None if value is None else round(100.0 * value, 2)


def cell(value) -> str:
    """None as a dash; a float with 2 decimals, 3 significant digits below
    0.1, thousands separators and no decimals from 1,000; anything else as text."""
    if value is None:
        return "–"
    if isinstance(value, float):
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.2f}" if abs(value) >= 0.1 or value == 0 else f"{value:.3g}"
    return str(value)


def p_value(p: Optional[float]) -> Optional[str]:
    """A p-value as every report prints it: "< 0.001" below 0.001, else 3
    decimals ("0.046"); None stays None."""
    if p is None:
        return None
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def mean_sd(values: Sequence[Optional[float]], scale: float = 1.0) -> Union[None, float, str]:
    """The cell of a figure measured once per seed: "mean ± sd" (sample
    standard deviation, ddof=1; both with 2 decimals when either is at
    least 0.1 and below 1,000, else each as ``cell`` prints it) of the
    values times ``scale``; with one value, the value alone (times
    ``scale``); None when every value is None (a figure the model does not
    have). Values for some seeds only are a ValueError."""
    missing = sum(value is None for value in values)
    if not values or missing == len(values):
        return None
    if missing:
        raise ValueError(
            f"a figure is missing for {missing} of {len(values)} seeds: evaluate every seed again (the step's --seeds)"
        )
    if len(values) == 1:
        return values[0] if scale == 1 else scale * values[0]
    scaled = [scale * value for value in values]
    mean, sd = float(statistics.mean(scaled)), float(statistics.stdev(scaled))
    if 0.1 <= max(abs(mean), sd) < 1000:  # one precision for both parts: "0.01 ± 0.50", not "0.00838 ± 0.50"
        return f"{mean:.2f} ± {sd:.2f}"
    return f"{cell(mean)} ± {cell(sd)}"


def wall_seconds(values: Sequence[Optional[float]]) -> Union[None, float, str]:
    """The cell of a run's wall seconds over the seeds (``mean_sd``), None
    when some seed's time is unknown: a run kept by ``--resume`` from a folder
    that recorded no time for it. Unlike a score, a time may be missing."""
    return None if None in values else mean_sd(values)


def seeds_caption(seeds: Sequence, columns: str = "") -> str:
    """The caption line of a table of ``mean_sd`` cells: how many seeds,
    which; about the ``columns`` named, if given ("Wall time: mean ± ...")."""
    listed = ", ".join(str(seed) for seed in seeds)
    if len(seeds) == 1:
        text = f"one training seed ({listed})."
    else:
        text = f"mean ± sample standard deviation (ddof=1) over {len(seeds)} training seeds ({listed})."
    return f"{columns}: {text}" if columns else text[0].upper() + text[1:]


def table(header: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A markdown table of ``rows`` (lists of values) under ``header``, every
    column named; a column with no value in any row (all None) is left out."""
    if any(not str(name).strip() for name in header):
        raise ValueError(f"every column of a table needs a name: {list(header)}")
    if any(len(row) != len(header) for row in rows):
        raise ValueError(f"a row has not the {len(header)} cells of the header {list(header)}")
    kept = [i for i in range(len(header)) if not rows or any(row[i] is not None for row in rows)]
    lines = ["| " + " | ".join(header[i] for i in kept) + " |", "|" + "---|" * len(kept)]
    return "\n".join(lines + ["| " + " | ".join(cell(row[i]) for i in kept) + " |" for row in rows])


def records_table(rows: List[Dict]) -> str:
    """A markdown table of dicts, one row each, the keys of the first as header."""
    header = list(rows[0])
    return table(header, [[row[k] for k in header] for row in rows])


def machine() -> str:
    """Today's date, the machine and its cores, for a title: ``2026-01-31, x86_64, 8 cores``."""
    return f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores"
