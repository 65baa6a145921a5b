"""Writing the experiments' output files: their folder made, UTF-8, each
written under a temporary name and renamed when complete (``atomic_path``),
so that an interrupted step leaves the previous file or none."""

import json
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
import srsly

from spacy_depner.util.atomic_files import TEMPORARY_MARK, atomic_path


def write_file(path: Path, text: str) -> str:
    """Write ``text`` to ``path``, making its folder; returns the text."""
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf8")
    return text


def write_json(path: Path, value, indent: Optional[int] = 2) -> str:
    """Write ``value`` as JSON to ``path``, making its folder; returns the JSON text."""
    return write_file(path, json.dumps(value, indent=indent))


def write_jsonl(path: Path, records: Iterable[Dict]) -> None:
    """Write the records as JSON lines to ``path``, making its folder."""
    with atomic_path(path) as temporary:
        srsly.write_jsonl(temporary, records)


LINKED_SUFFIXES = (".md", ".png", ".json")
UNLINKED_FOLDERS = ("corpus", "configs", "logs")  # and seed_<s>: inputs, trained pipelines and their scores


def linked_files(report: Path) -> List[str]:
    """The outputs beside REPORT that its "Files" section links: every
    .md, .png and .json file in REPORT's folder and its subfolders (a
    confidence study's report and png/, the charts, the metrics files),
    relative POSIX paths in sorted order; not REPORT itself, the training
    folders (seed_<s>, corpus, configs, logs) or unfinished temporaries."""
    folder = report.parent
    found = []
    for path in sorted(folder.rglob("*")):
        parts = path.relative_to(folder).parts
        if (
            not path.is_file()
            or path.suffix not in LINKED_SUFFIXES
            or path == report
            or any(
                part in UNLINKED_FOLDERS
                or part.startswith("seed_")
                or TEMPORARY_MARK in part
                or part.endswith((".partial", ".partial.json"))
                for part in parts
            )
        ):
            continue
        found.append("/".join(parts))
    return found


def files_section(report: Path) -> str:
    """A "## Files" section linking the ``linked_files`` of REPORT (relative links), or "" if none."""
    files = linked_files(report)
    if not files:
        return ""
    return "## Files\n\nWritten by the workflow beside this report:\n\n" + "\n".join(f"- [{f}]({f})" for f in files)


def write_linked_report(path: Path, text: str) -> str:
    """Write the markdown report ``text`` to ``path`` with its ``files_section`` at the end; returns the text written."""
    files = files_section(path)
    return write_file(path, text.rstrip("\n") + ("\n\n" + files if files else "") + "\n")


def save_figure(figure, path: Path) -> None:
    """Save a matplotlib figure to ``path`` (format by its suffix, 100 dpi), making its folder, and close it."""
    import matplotlib.pyplot as plt

    try:
        with atomic_path(path) as temporary:
            figure.savefig(temporary, dpi=100)
    finally:
        plt.close(figure)


def save_curves(
    path: Path,
    curves: Dict[str, Sequence[Tuple[float, Sequence[Optional[float]]]]],
    xlabel: str,
    title: str,
    ylabel: str = "test F1 (%)",
) -> None:
    """A line chart at ``path``: for each label of ``curves``, its points (x,
    the per-seed values) drawn at the mean x 100 with the sd x 100 as error
    bars; a point missing a seed's value is left out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4))
    for label, points in curves.items():
        complete = [(x, np.asarray(values, dtype=float)) for x, values in points if None not in values]
        if complete:
            axis.errorbar(
                [x for x, _ in complete],
                [100 * v.mean() for _, v in complete],
                yerr=[100 * v.std() for _, v in complete],
                marker="o",
                capsize=3,
                label=label,
            )
    axis.set_xlabel(xlabel)
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    axis.legend(fontsize="small")
    save_figure(figure, path)
