"""The one markdown table writer of the reports and benchmarks, and the
machine line of their titles. Library scores are fractions; reports print
them as percents (``percent``)."""
import os
import platform
import time
from typing import Dict, List, Optional, Sequence


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


def table(header: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A markdown table of ``rows`` (lists of values) under ``header``."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows])


def records_table(rows: List[Dict]) -> str:
    """A markdown table of dicts, one row each, the keys of the first as header."""
    header = list(rows[0])
    return table(header, [[row[k] for k in header] for row in rows])


def machine() -> str:
    """Today's date, the machine and its cores, for a title: ``2026-01-31, x86_64, 8 cores``."""
    return f"{time.strftime('%Y-%m-%d')}, {platform.machine()}, {os.cpu_count()} cores"
