"""numba's on-disk cache made safe for processes that compile one function
at the same time.

numba keeps one index per cached function (``*.nbi``: key -> data file
``*.nbc``) and adds an entry by reading the index, choosing the first data
file name the index does not use, writing the index back, then the data.
Two processes that add different specialisations of one function at once
(a background compilation beside its caller, spaCy's ``n_process`` workers,
Ray workers on one machine) can both choose the same name: the index then
sends one signature to the code compiled for another, which crashes when
its result is boxed ("NRT_adapt_ndarray_to_python: 'descr' is NULL") or
computes the other's values. Here every save holds an exclusive lock on a
file beside the index for the whole read-choose-write-write, and every load
a shared one, so an index never names data that another process has not
finished writing. POSIX ``fcntl.flock``; without it (Windows) numba's own
behaviour. Installed when ``spacy_depner.structures`` is imported, before
any kernel loads or saves."""

import os
from contextlib import contextmanager
from typing import Iterator

from numba.core import caching

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None

LOCK_SUFFIX = ".lock"


@contextmanager
def index_lock(index_path: str, exclusive: bool) -> Iterator[None]:
    """Hold a lock on ``index_path`` + ``LOCK_SUFFIX`` (exclusive or shared)
    for the block; no lock where the file cannot be opened (a read-only
    cache, which no process writes) or flock is missing."""
    if fcntl is None:
        yield
        return
    try:
        handle = os.open(index_path + LOCK_SUFFIX, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(handle)  # releases the lock


def _locked(method, exclusive: bool):
    def locked(self, *args, **kwargs):
        with index_lock(self._index_path, exclusive):
            return method(self, *args, **kwargs)

    locked.__wrapped__ = method
    return locked


def install() -> None:
    """Wrap ``IndexDataCacheFile.save`` (exclusive) and ``load`` (shared) in
    ``index_lock``, once per process."""
    cache_file = caching.IndexDataCacheFile
    if not hasattr(cache_file.save, "__wrapped__"):
        cache_file.save = _locked(cache_file.save, True)
        cache_file.load = _locked(cache_file.load, False)


install()
