"""``<!-- speeds: BENCHMARK[, BENCHMARK...] -->`` in a page: the rows of those
benchmarks from the one words/s table on the speed page (docs/results/speed.md,
written by experiments/publish/speeds.py), with a link to the whole table. A
page quotes a speed through this marker, never with a number of its own."""

import posixpath
import re

from experiments.publish import speeds

MARKER = re.compile(r"^<!--\s*speeds:\s*([^>]+?)\s*-->\s*$", re.MULTILINE)
ANCHOR = speeds.ANCHOR
COLUMNS = [column for column in speeds.HEADER if column != "benchmark"]


def speed_rows(benchmarks: list) -> list:
    """The rows of ``benchmarks`` in the speed page's table; a ValueError naming a benchmark it has no row of."""
    rows = speeds.read(speeds.SPEED_PAGE.read_text(encoding="utf8"))
    known = {row["benchmark"] for row in rows}
    unknown = [name for name in benchmarks if name not in known]
    if unknown:
        raise ValueError(
            f"<!-- speeds: {', '.join(benchmarks)} -->: no rows of {unknown} in {speeds.SPEED_PAGE} "
            f"(its benchmarks: {sorted(known)}); name one of them or run the benchmark"
        )
    return [row for row in rows if row["benchmark"] in benchmarks]


def fill_speed_markers(markdown: str, src_uri: str) -> str:
    """``markdown`` of the page at ``src_uri`` (inside docs/) with each speeds marker made its table."""

    def table(match: re.Match) -> str:
        rows = speed_rows([name.strip() for name in match.group(1).split(",")])
        link = posixpath.relpath("results/speed.md", posixpath.dirname(src_uri) or ".")
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(row[column] for column in COLUMNS) + " |" for row in rows]
        return "\n".join(lines) + f"\n\nFrom the [table of words/s per pipeline and setting]({link}#{ANCHOR})."

    return MARKER.sub(table, markdown)
