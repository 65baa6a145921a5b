"""Output files and folders that are either whole or absent, and resumable
outputs: what an interrupted run leaves can be checked and continued.

``atomic_path(final)`` yields a temporary path beside FINAL (same folder, so
the rename is atomic); whatever the block writes there, a file or a folder,
replaces FINAL when the block ends, and is removed if it raises. A process
killed inside the block leaves FINAL as it was, plus a stale temporary
(``NAME.tmp-XXXXXXXX``; ``remove_stale_temporaries`` clears them).

A resumable output keeps its progress in ``FINAL.partial`` (a file or a
folder) beside a manifest ``FINAL.partial.json`` of the settings that
determine the output (``check_manifest``); the caller continues from what
the partial holds and ``finish_partial`` renames it to FINAL.

No spaCy here: used by the commands and by the experiments.
"""

import json
import os
import re
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Union

PathLike = Union[str, Path]
TEMPORARY_MARK = ".tmp-"


def temporary_sibling(final: Path) -> Path:
    """A fresh unused path in FINAL's folder, ``STEM.tmp-XXXXXXXX`` + FINAL's
    suffix (kept for writers that choose the format by suffix, such as
    DocBin files or matplotlib's ``savefig``)."""
    while True:
        path = final.with_name(f"{final.stem}{TEMPORARY_MARK}{secrets.token_hex(4)}{final.suffix}")
        if not os.path.lexists(path):
            return path


def remove_path(path: Path) -> None:
    """Remove a file, link or folder tree, if it exists."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def install(written: Path, final: Path) -> None:
    """Move ``written`` (a file or folder) to ``final``, replacing what is
    there, of the same kind (else a ValueError): a file in one
    ``os.replace``; a folder by renaming the old one aside, renaming the new
    one in, then removing the old one."""
    if not os.path.lexists(written):
        raise FileNotFoundError(
            f"Nothing was written at the temporary path {written} of {final}: "
            "the block of atomic_path must write a file or a folder there"
        )
    kinds = ["folder" if path.is_dir() and not path.is_symlink() else "file" for path in (written, final)]
    if os.path.lexists(final) and kinds[0] != kinds[1]:
        raise ValueError(
            f"{final} is a {kinds[1]}, and the new output is a {kinds[0]}: move {final} away or choose another path"
        )
    if written.is_file() and not written.is_symlink():
        with open(written, "rb") as stream:  # the bytes reach the disk before the name does
            os.fsync(stream.fileno())
    if kinds[0] == "file" or not os.path.lexists(final):
        os.replace(written, final)
        return
    aside = temporary_sibling(final)
    os.replace(final, aside)
    os.replace(written, final)
    remove_path(aside)


@contextmanager
def atomic_path(final: PathLike, overwrite: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside ``final`` (its folder made) for the block
    to write a file or a folder at; on success it replaces ``final``
    (``install``), on an exception it is removed and ``final`` is untouched.
    With ``overwrite=False`` an existing ``final`` is a ValueError."""
    final = Path(final)
    if not overwrite and os.path.lexists(final):
        raise ValueError(f"{final} exists: choose another path, or allow replacing it")
    final.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_sibling(final)
    try:
        yield temporary
        install(temporary, final)
    except BaseException:
        remove_path(temporary)
        raise


@contextmanager
def atomic_folder_contents(folder: PathLike) -> Iterator[Path]:
    """Yield a temporary folder beside ``folder`` (made); on success each
    entry written there replaces the entry of the same name in ``folder``
    (made if needed), one ``install`` each, other entries of ``folder``
    kept; on an exception the temporary folder is removed and ``folder``
    is untouched (not made)."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is a file: give a folder path")
    folder.parent.mkdir(parents=True, exist_ok=True)
    temporary = temporary_sibling(folder)
    temporary.mkdir()
    try:
        yield temporary
        folder.mkdir(exist_ok=True)
        for entry in sorted(temporary.iterdir()):
            install(entry, folder / entry.name)
    finally:
        remove_path(temporary)


def remove_stale_temporaries(folder: PathLike, stem: Optional[str] = None) -> None:
    """Remove the temporaries ``STEM.tmp-XXXXXXXX...`` (any stem if None)
    that a killed ``atomic_path`` block left in ``folder``."""
    pattern = re.compile((".*" if stem is None else re.escape(stem)) + re.escape(TEMPORARY_MARK) + "[0-9a-f]{8}")
    for path in Path(folder).iterdir():
        if pattern.match(path.name):
            remove_path(path)


def partial_path(final: PathLike) -> Path:
    """Where a resumable output is written until it is complete: ``FINAL.partial``."""
    final = Path(final)
    return final.with_name(final.name + ".partial")


def manifest_path(final: PathLike) -> Path:
    """The settings of the run that writes ``partial_path(final)``: ``FINAL.partial.json``."""
    final = Path(final)
    return final.with_name(final.name + ".partial.json")


def path_fingerprint(path: PathLike) -> Dict[str, Any]:
    """``{"path", "size", "mtime_ns"}`` of a file, or of a folder the number
    of its files, their total size and their latest modification time: what
    changes when the content is replaced."""
    path = Path(path).resolve()
    if path.is_dir():
        files = [f.stat() for f in sorted(path.rglob("*")) if f.is_file()]
        return {
            "path": str(path),
            "files": len(files),
            "size": sum(f.st_size for f in files),
            "mtime_ns": max((f.st_mtime_ns for f in files), default=0),
        }
    stat = path.stat()
    return {"path": str(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def write_manifest(final: PathLike, settings: Dict[str, Any]) -> None:
    """Write the JSON ``settings`` to ``manifest_path(final)``, atomically."""
    with atomic_path(manifest_path(final)) as temporary:
        temporary.write_text(json.dumps(settings, indent=2, sort_keys=True) + "\n", encoding="utf8")


def check_manifest(final: PathLike, settings: Dict[str, Any], restart: bool) -> bool:
    """Whether ``partial_path(final)`` may be continued: True if it exists with
    a manifest equal to ``settings`` (JSON values); False if there is none
    (``settings`` written as its manifest: start afresh).
    A partial with another or no manifest is removed when ``restart``, else
    a ValueError that names the settings that differ and how to go on."""
    partial, manifest = partial_path(final), manifest_path(final)
    settings = json.loads(json.dumps(settings))  # as read back
    remove_stale_temporaries(partial.parent, manifest.stem)
    if os.path.lexists(partial):
        previous = read_manifest(manifest)
        if previous == settings:
            return True
        if not restart:
            differ = sorted(
                k for k in set(settings) | set(previous or {}) if (previous or {}).get(k) != settings.get(k)
            )
            cause = f"a run with other {', '.join(differ)}" if previous is not None else f"a run without {manifest}"
            raise ValueError(
                f"{partial} was left by {cause}: rerun with the same arguments to resume it, "
                f"or delete {partial} and {manifest} (or pass --force) to start again"
            )
        remove_path(partial)
    write_manifest(final, settings)
    return False


def read_manifest(manifest: Path) -> Optional[Dict[str, Any]]:
    """The settings of a manifest, or None if it is missing or unreadable."""
    try:
        value = json.loads(manifest.read_text(encoding="utf8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def finish_partial(final: PathLike) -> None:
    """Rename the complete ``partial_path(final)`` to ``final`` (``install``),
    then remove its manifest."""
    install(partial_path(final), Path(final))
    remove_path(manifest_path(final))


def discard_partial(final: PathLike) -> None:
    """Remove ``partial_path(final)`` and its manifest: what a run that
    failed before writing anything leaves, so that the same command, its
    input fixed, starts afresh instead of refusing a partial of other
    settings."""
    remove_path(partial_path(final))
    remove_path(manifest_path(final))


def complete_lines(path: PathLike, chunk_size: int = 1 << 20) -> int:
    """Cut a text file after its last newline (dropping a line torn by a
    killed writer) and return its number of lines; reads ``chunk_size``
    bytes at a time."""
    lines, end, offset = 0, 0, 0
    with open(path, "rb+") as stream:
        for chunk in iter(lambda: stream.read(chunk_size), b""):
            count = chunk.count(b"\n")
            if count:
                lines, end = lines + count, offset + chunk.rfind(b"\n") + 1
            offset += len(chunk)
        if end < offset:
            stream.truncate(end)
    return lines
