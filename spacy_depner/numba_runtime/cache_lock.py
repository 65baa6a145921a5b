"""numba's on-disk cache made safe for processes that compile one of this
package's functions at the same time.

numba keeps one index per cached function (``*.nbi``: key -> data file
``*.nbc``) and adds an entry by reading the index, choosing the first data
file name the index does not use, writing the index back, then the data.
Two processes that add different specialisations of one function at once
(a background compilation beside its caller, spaCy's ``n_process`` workers,
Ray workers on one machine) can both choose the same name: the index then
sends one signature to the code compiled for another, which crashes when
its result is boxed ("NRT_adapt_ndarray_to_python: 'descr' is NULL") or
computes the other's values. numba leaves concurrent writers of one cache
unsynchronised: numba/numba#4807 (a cache generated in parallel crashes) and
numba/numba#10128 (where numba's developers proposed a file lock); remove
this module when numba locks its index itself.

Here the cache of each function *of this package* (its source file under the
package's folder) gets :class:`LockedIndexDataCacheFile`: every save holds an
exclusive lock on a file beside the index for the whole read-choose-write-write,
every load a shared one, so an index never names data that another process
has not finished writing. Other libraries' caches keep numba's own class.
POSIX ``fcntl.flock``; without it (Windows) numba's own behaviour.

The hook is numba's ``Cache.__init__`` (it builds the ``IndexDataCacheFile``
of a function when ``@njit(cache=True)`` decorates it), so :func:`install`
runs before any kernel module is imported (``spacy_depner.numba_runtime.install``).
It checks what it patches first: where numba's internals moved, it warns once
and the package runs on numba's unlocked cache."""

import os
import warnings
from contextlib import contextmanager
from typing import Iterator

from .cache_dir import PACKAGE

try:
    import fcntl
except ImportError:  # pragma: no cover (Windows)
    fcntl = None

LOCK_SUFFIX = ".lock"
MOVED = (
    "spacy-depner: numba's cache internals are not where this numba version was tested "
    "(numba.core.caching.Cache, IndexDataCacheFile): the cache index of its kernels is not locked, so two processes "
    "compiling one kernel at once may corrupt the cache. Install a numba version within the bounds of pyproject.toml."
)
_warned = []


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


def warn_moved() -> None:
    """Warn, once per process, that numba's internals moved and the cache is not locked."""
    if not _warned:
        _warned.append(True)
        warnings.warn(MOVED, RuntimeWarning, stacklevel=3)


def ours(py_func) -> bool:
    """Whether ``py_func``'s source file lies in this package."""
    code = getattr(py_func, "__code__", None)
    return code is not None and os.path.realpath(code.co_filename).startswith(str(PACKAGE) + os.sep)


def numba_caching():
    """numba's caching module if it has what the lock patches, else None."""
    try:
        from numba.core import caching
    except ImportError:
        return None
    cache_file = getattr(caching, "IndexDataCacheFile", None)
    cache = getattr(caching, "Cache", None)
    if cache is None or cache_file is None or not all(hasattr(cache_file, name) for name in ("save", "load")):
        return None
    probe = cache_file(cache_path=os.curdir, filename_base="probe", source_stamp=None)  # sets paths, reads nothing
    return caching if isinstance(getattr(probe, "_index_path", None), str) else None


def locked_class(caching):
    """``IndexDataCacheFile`` whose save (exclusive) and load (shared) hold ``index_lock``."""

    class LockedIndexDataCacheFile(caching.IndexDataCacheFile):
        def save(self, key, data):
            with index_lock(self._index_path, True):
                return super().save(key, data)

        def load(self, key):
            with index_lock(self._index_path, False):
                return super().load(key)

    return LockedIndexDataCacheFile


LockedIndexDataCacheFile = None  # set by install() where numba has what it needs


def install() -> bool:
    """Give the caches of this package's functions ``LockedIndexDataCacheFile``, once per process; whether
    the lock is in place (False, after one warning, where numba's internals moved)."""
    global LockedIndexDataCacheFile
    caching = numba_caching()
    if caching is None:
        warn_moved()
        return False
    if LockedIndexDataCacheFile is not None or hasattr(caching.Cache.__init__, "__wrapped__"):
        return True
    LockedIndexDataCacheFile = locked_class(caching)
    original = caching.Cache.__init__

    def init(self, py_func, *args, **kwargs):
        original(self, py_func, *args, **kwargs)
        if not ours(py_func):
            return
        cache_file = getattr(self, "_cache_file", None)
        if type(cache_file) is not caching.IndexDataCacheFile:
            warn_moved()
            return
        cache_file.__class__ = LockedIndexDataCacheFile

    init.__wrapped__ = original
    caching.Cache.__init__ = init
    return True
