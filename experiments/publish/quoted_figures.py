"""``python -m experiments.publish.quoted_figures [ROOT]``: the checks that
keep the documentation's figures in one place (CI runs them as
tests/docs/test_figures.py):

* every figure a page quotes (README.md, docs/**/*.md but the published
  results pages) in a results context, an F1 or a words/s with a decimal
  point or a thousands separator, is a figure of a table of the generated
  results pages (docs/results/*.md, the speed page's table of words/s
  included);
* every page's first ``# `` heading, and every navigation title (mkdocs.yml
  and the results pages' titles the docs hooks give them), is unique;
* every relative link of a page points at a file of the repository.

A figure counts as quoted in a results context when it stands before
"words/s" or beside "F1" in prose, in a comparison in prose ("12.6 s against
6.0 s", "against 71.91"), or in a table column named for words/s or F, or as
either side of "mean ± sd" anywhere. Differences (a ΔF column, a
"+0.62") and ratios are derived, not quoted, and are not checked; nor is code."""

import re
import sys
from pathlib import Path
from typing import Iterator, List, Set, Tuple

from .site_pages import page_title, results_pages
from .summary import markdown_tables

NUMBER = r"[+\-−]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+)"  # with a thousands separator or a decimal point
FIGURE = re.compile(NUMBER)
PROSE = [
    re.compile(rf"({NUMBER})\s*(?:words/s|words per second)"),
    re.compile(rf"\bF1?\b\s*(?:of|=|:|is)?\s*({NUMBER})"),
    re.compile(rf"({NUMBER})(?:\s*±\s*{NUMBER})?\s*(?:test |dev )?F1?\b"),
    re.compile(rf"({NUMBER})\s*±"),
    re.compile(rf"±\s*({NUMBER})"),
    # a comparison in prose: of seconds ("12.6 s against 6.0 s", a cold start), of F ("against 71.91")
    re.compile(rf"({NUMBER})\s*s\s+against\s+{NUMBER}\s*s\b"),
    re.compile(rf"{NUMBER}\s*s\s+against\s+({NUMBER})\s*s\b"),
    re.compile(r"\bagainst\s+([+\-−]?\d+\.\d\d)\b"),
]
RESULT_COLUMN = re.compile(r"words/s|(^|\W)(F1?|test F|dev F)(\W|$)")
DERIVED_COLUMN = re.compile(r"Δ|ratio|difference")
CODE = re.compile(r"^(```|~~~).*?^\1|`[^`\n]+`", re.MULTILINE | re.DOTALL)
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
NAV_ENTRY = re.compile(r"^\s*-\s+(.+?):\s+(\S+\.md)\s*$", re.MULTILINE)


def normal(figure: str) -> str:
    """A figure as the tables are searched for it: no sign, no thousands separator."""
    return figure.lstrip("+-−").replace(",", "")


def results_folder(root: Path) -> Path:
    return root / "docs" / "results"


def generated_figures(root: Path) -> Set[str]:
    """Every figure in a table of the generated results pages."""
    figures = set()
    for page in results_folder(root).glob("*.md"):
        for table in markdown_tables(page.read_text(encoding="utf8")):
            for row in table:
                figures.update(normal(f) for cell in row.values() for f in FIGURE.findall(cell))
    return figures


def quoting_pages(root: Path) -> List[Path]:
    """README.md and the documentation's own pages (the published results pages are the source of figures)."""
    results = results_folder(root)
    pages = [path for path in sorted((root / "docs").rglob("*.md")) if results not in path.parents]
    return [root / "README.md"] + pages


def quoted_figures(text: str) -> Iterator[Tuple[int, str]]:
    """(line number, figure) of every figure the text quotes in a results context (code and comments left out)."""
    text = COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    text = CODE.sub(lambda m: "\n" * m.group().count("\n"), text)
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not line.startswith("|"):
            yield from ((number, figure) for figure in _in_prose(line))
    for start, table in _tables_with_lines(lines):
        for offset, row in enumerate(table):
            for column, cell in row.items():
                if RESULT_COLUMN.search(column) and not DERIVED_COLUMN.search(column):
                    found = FIGURE.findall(cell)
                else:
                    found = _in_prose(cell)
                for figure in found:
                    yield start + 2 + offset + 1, figure


def _in_prose(text: str) -> List[str]:
    """The figures of ``text`` that a pattern of PROSE finds, each once, in order."""
    found = {match.start(1): match.group(1) for pattern in PROSE for match in pattern.finditer(text)}
    return [found[start] for start in sorted(found)]


def _tables_with_lines(lines: List[str]) -> Iterator[Tuple[int, List[dict]]]:
    """(line number of the header, rows) of every table."""
    text = "\n".join(lines)
    tables = iter(markdown_tables(text))
    for i in range(len(lines) - 1):
        starts = lines[i].startswith("|") and re.fullmatch(r"\|[-| :]+\|", lines[i + 1].strip())
        if starts and not (i > 0 and lines[i - 1].startswith("|")):
            yield i, next(tables)


def unheld_figures(root: Path) -> List[str]:
    """ "page:line: figure" of every quoted figure that no generated table holds."""
    held, problems = generated_figures(root), []
    for page in quoting_pages(root):
        for line, figure in quoted_figures(page.read_text(encoding="utf8")):
            if normal(figure) not in held:
                problems.append(f"{page.relative_to(root)}:{line}: {figure}")
    return problems


def duplicate_titles(root: Path) -> List[str]:
    """The page titles (first headings) and the navigation titles used more than once, with their pages."""
    docs = root / "docs"
    headings = {}
    for page in sorted(docs.rglob("*.md")):
        title = page_title(page.read_text(encoding="utf8"))
        if title is not None:
            headings.setdefault(title, []).append(str(page.relative_to(root)))
    nav = {}
    mkdocs = (root / "mkdocs.yml").read_text(encoding="utf8")
    entries = NAV_ENTRY.findall(mkdocs) + results_pages(docs)
    for title, path in entries:
        nav.setdefault(title, []).append(path)
    problems = [f"page title {title!r}: {', '.join(pages)}" for title, pages in headings.items() if len(pages) > 1]
    return problems + [f"navigation title {title!r}: {', '.join(p)}" for title, p in nav.items() if len(p) > 1]


def broken_links(root: Path) -> List[str]:
    """ "page: target" of every relative link (not code) whose file is not in the repository."""
    problems = []
    for page in [root / "README.md", *sorted((root / "docs").rglob("*.md"))]:
        text = CODE.sub("", page.read_text(encoding="utf8"))
        for target in LINK.findall(text):
            if re.match(r"[a-zA-Z][a-zA-Z+.-]*:|#", target):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                problems.append(f"{page.relative_to(root)}: {target}")
    return problems


def main(root: Path) -> int:
    failed = False
    for name, problems in (
        ("figures quoted that no generated table holds", unheld_figures(root)),
        ("titles used more than once", duplicate_titles(root)),
        ("links to files not in the repository", broken_links(root)),
    ):
        if problems:
            failed = True
            print(f"{name}:\n  " + "\n  ".join(problems))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]))
