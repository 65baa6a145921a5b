"""The progress bar of every long loop of the evaluation and the commands:
tqdm (a spaCy dependency) on stderr, so that printed results stay clean."""

from typing import Iterable, Optional, TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress(items: Optional[Iterable[T]], total: Optional[int], what: str, unit: str = "doc") -> tqdm:
    """``items`` unchanged, with a bar ``what: n/total [elapsed<remaining, rate]``
    on stderr that disappears when the loop ends (``items`` None: a bar
    moved by its ``update(n)``)."""
    return tqdm(items, total=total, desc=what, unit=unit, leave=False, dynamic_ncols=True, mininterval=0.5)
