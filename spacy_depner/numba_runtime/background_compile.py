"""A structure's other pass compiled in a second process while this one works.

From an empty numba cache, a component of a nested space compiles two
passes of several seconds each, one after the other: Viterbi (decoding; in
training, the largest subset of the gold mentions the space holds) and the
marginals (training's loss; the probabilities of what it predicts). When
the first call of one of them finds the other neither compiled in this
process nor in the numba cache, it starts a Python process (``BOOTSTRAP``:
the package's kernels alone, without spaCy; then ``main``) that calls the
caller's runner (``nested._mentions.compile_pass``: that other pass once on
a three-word document, with the argument types of every call), so that
numba writes it to the shared cache, while this process compiles the first one. The first call of the
other pass waits for that process and loads the kernel from the cache. A
cache folder has at most one such process per kernel (a lock file beside
the kernel's cache index); it ends with this process at the latest. Set
``SPACY_DEPNER_BACKGROUND_COMPILE=0`` to compile everything in the calling
process; with one CPU nothing is started.
"""

import atexit
import importlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Optional, Tuple

from .cache_dir import PACKAGE

SWITCH = "SPACY_DEPNER_BACKGROUND_COMPILE"
STALE_LOCK_SECONDS = 600.0  # a lock older than this is left by a process that did not end well
WAIT_SECONDS = 300.0  # the longest the caller waits for a background compilation before compiling itself

# The child imports the kernels without the package's __init__, which imports spaCy (seconds they do not need).
BOOTSTRAP = """
import sys, types
package = types.ModuleType("spacy_depner")
package.__path__ = [sys.argv[1]]
sys.modules["spacy_depner"] = package
from spacy_depner.numba_runtime import install
install()
from spacy_depner.numba_runtime.background_compile import main
main(sys.argv[2:])
"""
_running: Dict[Tuple[str, str], "subprocess.Popen"] = {}
_locks: Dict[Tuple[str, str], Path] = {}


def cache_index(dispatcher) -> Optional[Path]:
    """The numba cache index file of ``dispatcher`` (None: no disk cache, or
    a numba whose cache internals differ)."""
    try:
        return Path(dispatcher._cache._cache_file._index_path)
    except AttributeError:
        return None


def needs_compiling(dispatcher) -> bool:
    """Whether ``dispatcher`` has no compiled code in this process and none in the disk cache."""
    index = cache_index(dispatcher)
    return not dispatcher.overloads and index is not None and not index.exists()


def start(kind: str, space: str, dispatcher, runner: str) -> bool:
    """Start compiling the pass ``kind`` of ``space``, whose compiled driver
    is ``dispatcher``, in a background process if it needs compiling: it
    calls ``runner`` ("module:function") with ``kind`` and ``space``.
    Whether one was started."""
    if os.environ.get(SWITCH, "1") == "0" or (os.cpu_count() or 1) < 2 or (kind, space) in _running:
        return False
    if not needs_compiling(dispatcher):
        return False
    index = cache_index(dispatcher)
    lock = index.parent / f"{index.name}.compiling"
    try:
        index.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        if time.time() - lock.stat().st_mtime < STALE_LOCK_SECONDS:
            return False  # another process compiles it
        lock.touch()
    except OSError:
        return False
    _running[kind, space] = subprocess.Popen(
        [sys.executable, "-c", BOOTSTRAP, str(PACKAGE), runner, kind, space, str(lock)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
    )
    _locks[kind, space] = lock
    return True


def wait(kind: str, space: str) -> None:
    """Wait (at most ``WAIT_SECONDS``) for this process's background
    compilation of the pass ``kind`` of ``space``, if one runs."""
    child = _running.get((kind, space))
    if child is None or child.poll() is not None:
        return
    try:
        child.wait(timeout=WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        pass


@atexit.register
def _stop() -> None:
    """End the background compilations still running, and remove their locks."""
    for key, child in _running.items():
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                child.kill()
        _locks[key].unlink(missing_ok=True)


def main(argv) -> None:
    """The background process: RUNNER KIND SPACE LOCK."""
    runner, kind, space, lock = argv
    os.environ[SWITCH] = "0"  # this process compiles one pass and starts none
    try:
        module, function = runner.split(":")
        getattr(importlib.import_module(module), function)(kind, space)
    finally:
        Path(lock).unlink(missing_ok=True)


if __name__ == "__main__":
    main(sys.argv[1:])
