"""``spacy_depner.numba_runtime.cache_lock``: two writers of one numba cache
index (two processes adding specialisations of one function) take turns,
so each key keeps its own data; a save holds the lock a second writer needs;
only this package's functions get the lock, and a numba whose internals moved
runs without it after one warning."""

import importlib
import sys
import threading
import warnings

import pytest
from numba.core import caching

import spacy_depner.ml.span_kernels as span_kernels
from spacy_depner.numba_runtime import cache_lock
from spacy_depner.numba_runtime.cache_lock import LOCK_SUFFIX

fcntl = pytest.importorskip("fcntl")
STAMP = (1.0, 2)  # the source stamp numba checks the index against


def cache_file(folder) -> caching.IndexDataCacheFile:
    """One process's view of the cache of one of the package's functions (its own object, its own file handles)."""
    return cache_lock.LockedIndexDataCacheFile(str(folder), "kernel.f-10.py311", STAMP)


def test_a_second_writer_waits_for_the_first_and_each_key_keeps_its_own_data(tmp_path):
    first, second = cache_file(tmp_path), cache_file(tmp_path)
    inside, release = threading.Event(), threading.Event()
    write_index = first._save_index

    def slow_write(overloads):  # the first writer stops between choosing its file name and writing the index
        inside.set()
        assert release.wait(10)
        write_index(overloads)

    first._save_index = slow_write
    writers = [
        threading.Thread(target=first.save, args=("key a", "code compiled for a")),
        threading.Thread(target=second.save, args=("key b", "code compiled for b")),
    ]
    writers[0].start()
    assert inside.wait(10)
    writers[1].start()
    writers[1].join(0.5)
    assert writers[1].is_alive()  # without the lock it would choose the first's file name and finish
    release.set()
    for writer in writers:
        writer.join(10)
    reader = cache_file(tmp_path)
    assert reader.load("key a") == "code compiled for a"
    assert reader.load("key b") == "code compiled for b"
    assert len(set(reader._load_index().values())) == 2


def test_a_save_holds_the_exclusive_lock_and_a_load_a_shared_one(tmp_path):
    cache = cache_file(tmp_path)
    seen = []

    def try_lock(kind):
        handle = open(cache._index_path + LOCK_SUFFIX, "a")
        try:
            fcntl.flock(handle, kind | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            handle.close()

    write_index, read_data = cache._save_index, cache._load_data
    cache._save_index = lambda overloads: (seen.append(("save", try_lock(fcntl.LOCK_SH))), write_index(overloads))
    cache._load_data = lambda name: (
        seen.append(("load", try_lock(fcntl.LOCK_SH), try_lock(fcntl.LOCK_EX))),
        read_data(name),
    )[1]
    cache.save("key", [1, 2, 3])
    assert cache.load("key") == [1, 2, 3]
    assert seen == [
        ("save", False),
        ("load", True, False),
    ]  # no reader during a save; readers, no writer, during a load


def test_only_the_packages_functions_get_the_lock(tmp_path, monkeypatch):
    assert type(span_kernels.assemble_span_scores._cache._cache_file) is cache_lock.LockedIndexDataCacheFile
    (tmp_path / "other_library.py").write_text(
        "from numba import njit\n\n@njit(cache=True)\ndef twice(x):\n    return 2 * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    other = importlib.import_module("other_library")
    try:
        assert type(other.twice._cache._cache_file) is caching.IndexDataCacheFile
    finally:
        sys.modules.pop("other_library", None)
    assert not cache_lock.ours(other.twice.py_func) and cache_lock.ours(span_kernels.assemble_span_scores.py_func)


def test_numba_internals_moved_warn_once_and_run_without_the_lock(monkeypatch):
    monkeypatch.setattr(caching, "IndexDataCacheFile", None)
    monkeypatch.setattr(cache_lock, "_warned", [])
    with pytest.warns(RuntimeWarning, match="not locked"):
        assert cache_lock.install() is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache_lock.install() is False  # once per process
