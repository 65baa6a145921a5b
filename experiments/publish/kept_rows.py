"""The rows a new report did not measure, kept from its published page.

A workflow may run on part of its corpora or models (the nested study on
GENIA alone): its report then has no row for the others, and publishing it as
it is would drop results that no run replaced. For a report whose tables have
the columns ``corpus`` and ``model``, every row of the published page's table
(under the same heading) whose (corpus, model, trees) the new table lacks is
kept, after the new rows, and a column ``run`` gives each row the date of the
run that measured it (the kept rows: the date their page had)."""

import re
from typing import Dict, List, Optional, Tuple

from .speeds import table_text
from .summary import markdown_tables

RUN = "run"
KEY = ("corpus", "model", "trees")
EMPTY = "*(no rows: this run did not write the results of this table)*"
HEADING = re.compile(r"^## .*$", re.MULTILINE)


def sections(text: str) -> Dict[str, str]:
    """{"## heading": its text up to the next heading} of a page."""
    starts = [match.start() for match in HEADING.finditer(text)] + [len(text)]
    return {text[a:b].splitlines()[0]: text[a:b] for a, b in zip(starts, starts[1:])}


def table_span(section: str) -> Optional[Tuple[int, int]]:
    """Where the section's first table lies in it (start, end), or its empty-table note; None without either."""
    lines = section.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for index, line in enumerate(lines):
        if line.startswith(EMPTY):
            return offsets[index], offsets[index + 1]
        if line.startswith("|") and index + 1 < len(lines) and re.fullmatch(r"\|[-| :]+\|", lines[index + 1].strip()):
            last = index
            while last + 1 < len(lines) and lines[last + 1].startswith("|"):
                last += 1
            return offsets[index], offsets[last + 1]
    return None


def merged_table(new: List[Dict[str, str]], old: List[Dict[str, str]], date: str, old_date: str) -> Optional[str]:
    """The new rows then the old rows the new table lacks, each with its run; None when nothing is kept."""
    if not old or not {"corpus", "model"} <= set(old[0]):
        return None
    measured = {tuple(row.get(k) for k in KEY) for row in new}
    kept = [{RUN: old_date, **row} for row in old if tuple(row.get(k) for k in KEY) not in measured]
    if not kept:
        return None
    columns = list(dict.fromkeys([c for c in (list(new[0]) if new else []) + list(old[0]) if c != RUN] + [RUN]))
    return table_text([{RUN: date, **row} for row in new] + kept, columns) + "\n"


def with_kept_rows(text: str, published: str, date: str) -> str:
    """The new page ``text`` (its run of ``date``) with the rows of the ``published`` page that it lacks."""
    found = re.search(r"wrote on (\d{4}-\d\d-\d\d)", published)
    old_date = found.group(1) if found else "an earlier run"
    old_sections = sections(published)
    for heading, section in sections(text).items():
        old_section = old_sections.get(heading)
        span, old_span = table_span(section), table_span(old_section or "")
        if span is None or old_span is None:
            continue
        new_rows = (markdown_tables(section[span[0] : span[1]]) or [[]])[0]
        old_rows = (markdown_tables(old_section[old_span[0] : old_span[1]]) or [[]])[0]
        table = merged_table(new_rows, old_rows, date, old_date)
        if table is not None:
            text = text.replace(section, section[: span[0]] + table + section[span[1] :], 1)
    return text
