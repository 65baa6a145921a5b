"""What a numeric setting must be, checked in one place for every layer: a
finite real number, or a positive integer; a bool is neither (Python counts
True as 1)."""

import numpy as np


def is_finite_number(value: object) -> bool:
    """Whether ``value`` is a finite int or float (numpy's included), not a bool."""
    return (
        not isinstance(value, (bool, np.bool_))
        and isinstance(value, (int, float, np.integer, np.floating))
        and bool(np.isfinite(value))
    )


def is_positive_int(value: object) -> bool:
    """Whether ``value`` is an int (numpy's included) of at least 1, not a bool."""
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer)) and value >= 1
