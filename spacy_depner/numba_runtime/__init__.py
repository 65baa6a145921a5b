"""Everything this package changes in numba's behaviour, in one place, applied to
this package's own compiled functions only:

- ``cache_dir``: the on-disk cache of the ``@njit(cache=True)`` kernels goes to a
  per-user folder (one per state of the kernel sources) instead of the installed
  package; ``NUMBA_CACHE_DIR`` moves it.
- ``cache_lock``: the cache index of this package's kernels is locked while a
  process reads or writes it (numba/numba#4807, numba/numba#10128: numba does not
  synchronise processes that write one cache); installed after a check of numba's
  internals, with one warning and numba's own behaviour where they moved.
- ``background_compile``: from an empty cache, a nested space's second pass is
  compiled in a second process beside the first.

``python -m spacy_depner compile`` (``cli/compile_kernels.py``) fills the cache ahead, once after install.

:func:`install` runs before any kernel module is imported (``spacy_depner``'s
``__init__`` calls it, and the background compilation's process); it imports
numba only for the lock, never spaCy. The numba versions it was tested with are
the bounds of ``numba`` in pyproject.toml; CI runs the cache-lock tests against
the lowest and the highest (.ci/run)."""

from .cache_dir import use_user_cache_dir

__all__ = ["install", "use_user_cache_dir"]


def install() -> None:
    """Point numba's cache at the package's folder, then lock this package's cache indexes; once per process."""
    use_user_cache_dir()
    from .cache_lock import install as install_cache_lock

    install_cache_lock()
