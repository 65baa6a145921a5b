"""Where numba keeps the compiled code of the ``@njit(cache=True)`` functions.

By default numba writes its cache (``*.nbi``, ``*.nbc``) into ``__pycache__``
beside each source file, that is into the installed package, where pip neither
installed nor removes it: a later ``pip install -e`` or ``pip uninstall``
leaves a ``spacy_depner`` folder of cache files behind that shadows the real
package. The package instead sends the cache to a per-user cache directory,
unless ``NUMBA_CACHE_DIR`` says where. This module is pure Python and imports
neither numba nor spaCy: ``spacy_depner/__init__.py`` calls
:func:`use_user_cache_dir` (through ``spacy_depner.numba_runtime``) before any
module decorates a function.

numba checks a cached kernel against its own source file only: a kernel whose
file is unchanged but which calls a changed function of another module would
run the old compiled code. The per-user directory therefore has one folder
per state of the kernel sources (:func:`kernel_sources_fingerprint`): a new
release, or an edited kernel module, compiles afresh into a new folder.
"""

import hashlib
import os
import sys
import tempfile
from pathlib import Path

APP_NAME = "spacy-depner"
PACKAGE = Path(__file__).resolve().parents[1]
# every module that holds @njit kernels or functions they call (a test checks that none is missed)
KERNEL_SOURCES = ("structures", "ml/span_kernels.py")


def kernel_modules() -> list:
    """The package's modules that KERNEL_SOURCES names, sorted."""
    found = []
    for name in KERNEL_SOURCES:
        path = PACKAGE / name
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def kernel_sources_fingerprint() -> str:
    """12 hex digits that change when any kernel module changes (its path,
    size and modification time), as numba's own check of one file does."""
    digest = hashlib.blake2b(digest_size=6)
    for path in kernel_modules():
        stat = path.stat()
        digest.update(f"{path.relative_to(PACKAGE)}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()


def user_cache_root() -> Path:
    """The platform's per-user cache directory: ``%LOCALAPPDATA%`` on Windows,
    ``~/Library/Caches`` on macOS, ``$XDG_CACHE_HOME`` (if absolute) or
    ``~/.cache`` elsewhere."""
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA")
        return Path(local) if local else Path.home() / "AppData" / "Local"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"


def temp_cache_dir() -> Path:
    """A per-user folder in the temporary directory, for a home that cannot be written."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"{APP_NAME}-{user}" / "numba"


def writable_dir(path: Path) -> bool:
    """Create ``path`` if needed and tell whether a file can be written in it
    (numba's own test before it uses a cache directory)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
    except (OSError, RuntimeError):  # RuntimeError: Path.home() without a home directory
        return False
    return True


def default_cache_dir() -> Path | None:
    """The first writable of the user cache directory and the temporary one,
    each in its folder for the kernel sources' fingerprint; ``None`` when
    neither is (numba then falls back to its own locations)."""
    candidates = []
    try:
        candidates.append(user_cache_root() / APP_NAME / "numba")
    except RuntimeError:  # no home directory to expand
        pass
    candidates.append(temp_cache_dir())
    fingerprint = kernel_sources_fingerprint()
    candidates = [path / fingerprint for path in candidates]
    return next((path for path in candidates if writable_dir(path)), None)


def use_user_cache_dir() -> str | None:
    """Point numba's cache at :func:`default_cache_dir` unless ``NUMBA_CACHE_DIR``
    is set; return the directory numba will use (``None``: numba's default).

    The environment variable is set too, so that worker processes (``nlp.pipe``
    with ``n_process``, Ray) use the same cache. If numba is imported already its
    config is updated; otherwise numba is not imported here (importing the
    package stays cheap) and reads the variable when it is.
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return os.environ["NUMBA_CACHE_DIR"]
    numba = sys.modules.get("numba")
    if numba is not None and numba.config.CACHE_DIR:  # set in numba's config by the user
        return numba.config.CACHE_DIR
    path = default_cache_dir()
    if path is None:
        return None
    os.environ["NUMBA_CACHE_DIR"] = str(path)
    if numba is not None:
        numba.config.CACHE_DIR = str(path)
    return str(path)
