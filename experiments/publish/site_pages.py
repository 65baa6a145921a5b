"""The documentation site's pages that are written from others: the results
overview (docs/results/index.md, the published pages with their navigation
titles) and the title of a page. ``publish-results`` writes the overview into
the repository, so that a link to it works in the sources too; the docs hooks
write it again at build time from the same functions."""

import re
from pathlib import Path
from typing import List, Optional, Tuple

RESULTS = "results"
INDEX = "index.md"
HEADING = re.compile(r"^# (.+)$", re.MULTILINE)
DETAILS = re.compile(r"^(.*?) \((.*)\)$")  # a title with its run's details in parentheses: "Speed (2026-01-31, ...)"


def page_title(text: str) -> Optional[str]:
    """The first ``# `` heading of a markdown page (None if it has none)."""
    found = HEADING.search(re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.MULTILINE | re.DOTALL))
    return found.group(1).strip() if found else None


def nav_titles(headings: List[str]) -> List[str]:
    """A short title for the navigation per heading: without its parenthesised details, unless two headings
    would then read alike; those keep the first item of their details ("Active learning (GENIA)")."""
    short = [DETAILS.sub(r"\1", heading) for heading in headings]
    titles = []
    for heading, title in zip(headings, short):
        details = DETAILS.match(heading)
        if short.count(title) > 1 and details:
            title = f"{title} ({details.group(2).split(',')[0].strip()})"
        titles.append(title)
    return titles


def results_pages(docs_dir: Path) -> List[Tuple[str, str]]:
    """(navigation title, path inside docs/) of every published results page, by file name."""
    paths = [path for path in sorted((docs_dir / RESULTS).glob("*.md")) if path.name != INDEX]
    headings = [page_title(path.read_text(encoding="utf-8")) or path.stem for path in paths]
    return [(title, f"{RESULTS}/{path.name}") for title, path in zip(nav_titles(headings), paths)]


def results_index(pages: List[Tuple[str, str]]) -> str:
    """The overview page of the results section."""
    lines = [
        "# Results",
        "",
        '!!! note "Generated"',
        "    Each page below is a workflow's own report, copied by `python -m experiments publish-results "
        "METRICS docs/results` (project.yml: `spacy project run publish-results`) from the last real run, which "
        "also writes this overview. Do not edit them by hand: run the workflow, then publish.",
        "",
    ]
    lines += [f"- [{title}]({path.removeprefix(RESULTS + '/')})" for title, path in pages]
    if not pages:
        lines.append("No results have been published yet.")
    return "\n".join(lines) + "\n"


def write_results_index(docs_dir: Path) -> str:
    path = docs_dir / RESULTS / INDEX
    path.write_text(results_index(results_pages(docs_dir)), encoding="utf-8")
    return f"{path}: the overview of the results pages"
