"""``python -m experiments publish-results METRICS DOCS_RESULTS``: copy the
reports the workflows wrote under METRICS (metrics/, not tracked) into the
documentation site as DOCS_RESULTS/<name>.md, each with the figures it
links (and the ones its workflow draws beside it), under a note that says
which workflow wrote it and that the page is generated.

A report missing from METRICS leaves its published page as it was."""

import datetime
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Tuple

import typer

from ..kit.outputs import write_file
from . import speeds
from .kept_rows import with_kept_rows
from .site_pages import write_results_index
from .summary import write_summary
from .targets import filled_targets


@dataclass(frozen=True)
class Report:
    name: str  # the page: DOCS_RESULTS/<name>.md
    source: str  # the report, inside METRICS
    written_by: str  # the workflow step or command that writes it
    figures: Tuple[Tuple[str, str], ...] = ()  # (file beside the report, caption): drawn, not linked by the report
    keeps_rows: bool = False  # rows of its published page that the new report did not measure stay (kept_rows.py)


REPORTS = [
    Report("study", "study/report.md", "workflow `all`, step `report` (`python -m experiments study report`)"),
    Report(
        "confidence",
        "study/confidence/report.md",
        "workflow `all`, step `confidence` (`python -m experiments confidence`)",
    ),
    Report(
        "nested",
        "nested/report.md",
        "workflow `nested`, step `nested-report` (`python -m experiments nested-study report`)",
        keeps_rows=True,  # a run on GENIA or GUM alone keeps the other corpus's rows
    ),
    Report(
        "two_stage",
        "two_stage/report.md",
        "workflow `two_stage`, step `two-stage-report` (`python -m experiments two-stage report`)",
    ),
    Report(
        "two_stage_genia",
        "two_stage_genia/report.md",
        "workflow `two_stage`, step `two-stage-report` (`python -m experiments two-stage report`)",
    ),
    Report(
        "pretrained_first_stage",
        "pretrained_first_stage/report.md",
        "workflow `pretrained_first_stage`, step `pretrained-first-stage-report` (`python -m experiments "
        "pretrained-first-stage report`)",
    ),
    Report(
        "gum_articles",
        "pretrained_first_stage/gum_articles.md",
        "workflow `pretrained_first_stage`, step `pretrained-first-stage-gum-articles` (`python -m experiments "
        "pretrained-first-stage gum-articles`)",
    ),
    Report(
        "partial",
        "partial/report.md",
        "workflow `partial` (`python -m experiments partial-study`)",
        (("partial.png", "Test F1 against the fraction of training entities removed"),),
    ),
    Report(
        "active_learning",
        "active_learning/report.md",
        "workflow `active_learning` (`python -m experiments active-learning-study`)",
        (("learning_curves.png", "Test F1 against the annotated training sentences"),),
    ),
    Report(
        "active_learning_genia",
        "active_learning_genia/report.md",
        "workflow `active_learning`, step `active-learning-genia` (`python -m experiments active-learning-study "
        "--corpus genia`)",
        (("learning_curves.png", "Test F1 against the tokens reviewed"),),
    ),
    Report(
        "transformers",
        "transformer/report.md",
        "workflow `transformers`, step `transformer-report` (`python -m experiments transformer-report`)",
    ),
    Report(
        "cold_start",
        "cold_start.md",
        "benchmark `python -m experiments bench-cold-start --output metrics/cold_start.md` (no workflow: run it on "
        "a quiet machine)",
    ),
    Report(
        "speed",
        "bench.md",
        "speed benchmark `python -m experiments bench --output metrics/bench.md` (no "
        "workflow: run it on the machine to measure)",
    ),
]
SPEED_PAGE = "speed"  # its table of words/s per pipeline and setting: experiments/publish/speeds.py
IMAGE = re.compile(r"!\[([^\]]*)\]\(([^)\s]+)\)")
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s:]+)\)")  # a relative link (no scheme)
EMPTY_TABLE = re.compile(r"^(\|.*\|)\n\|[-| :]+\|\n(?!\|)", re.MULTILINE)


def _copy_image(report: Report, folder: Path, target: str, docs_results: Path) -> str:
    """Copy the image ``target`` (relative to the report's folder) into DOCS_RESULTS; its new link."""
    source = folder / target
    published = f"{report.name}_{Path(target).name}"
    shutil.copyfile(source, docs_results / published)
    return published


def published_text(report: Report, text: str, folder: Path, docs_results: Path, date: str) -> str:
    """The page of ``report``: the note, then its text with the images copied and linked from the page,
    links to other files of the run as text, and tables without rows said to be empty."""

    def image(match: re.Match) -> str:
        alt, target = match.groups()
        if re.match(r"[a-z]+:", target):
            return match.group(0)
        if not (folder / target).is_file():
            return f"*(figure {target} was not found beside the report)*"
        return f"![{alt}]({_copy_image(report, folder, target, docs_results)})"

    text = IMAGE.sub(image, text)
    text = LINK.sub(lambda m: f"{m.group(1)} (`{m.group(2)}`)", text)
    text = EMPTY_TABLE.sub("*(no rows: this run did not write the results of this table)*\n", text)
    for figure, caption in report.figures:
        if (folder / figure).is_file():
            text = text.rstrip("\n") + f"\n\n![{caption}]({_copy_image(report, folder, figure, docs_results)})\n"
    title, _, body = text.partition("\n") if text.startswith("# ") else (f"# {report.name}", "", text)
    note = (
        '!!! note "Generated page"\n'
        f"    The report `metrics/{report.source}` that the {report.written_by} wrote on {date}, published by "
        "`python -m experiments publish-results`. Do not edit it by hand: rerun the workflow, then publish."
    )
    return f"{title}\n\n{note}\n\n{body.lstrip()}"


def publish(metrics: Path, docs_results: Path) -> List[str]:
    """Publish every report found under ``metrics``; the messages of what was done."""
    docs_results.mkdir(parents=True, exist_ok=True)
    done = []
    for report in REPORTS:
        source = metrics / report.source
        if not source.is_file():
            done.append(f"{report.name}: no {source}, its page left as it was")
            continue
        date = datetime.date.fromtimestamp(source.stat().st_mtime).isoformat()
        page = published_text(report, source.read_text(encoding="utf8"), source.parent, docs_results, date)
        published = docs_results / f"{report.name}.md"
        if report.keeps_rows and published.is_file():
            page = with_kept_rows(page, published.read_text(encoding="utf8"), date)
        if report.name == SPEED_PAGE and published.is_file():  # the words/s table of every benchmark stays
            page = speeds.with_table(page, speeds.read(published.read_text(encoding="utf8")))
        write_file(published, page)
        done.append(f"{report.name}: {source} -> {published}")
    done += speeds.rows_from_pages(docs_results) + speeds.rows_from_reports(metrics, docs_results / f"{SPEED_PAGE}.md")
    done += filled_targets(docs_results)
    return done + [write_results_index(docs_results.parent)]


def publish_results(
    metrics: Path = typer.Argument(..., help="The workflows' metrics folder (metrics/ of the project)"),
    docs_results: Path = typer.Argument(..., help="The results folder of the documentation (docs/results)"),
    readme: Optional[Path] = typer.Option(
        None, "--readme", help="The README whose 'Results in short' block is regenerated from the pages"
    ),
) -> None:
    """Copy the workflows' reports under METRICS, with their figures, into DOCS_RESULTS as the pages of the
    documentation's Results section; with --readme, regenerate the README's results in short from the pages."""
    for line in publish(metrics, docs_results):
        typer.echo(line)
    if readme is not None:
        changed = write_summary(readme, docs_results)
        typer.echo(f"{readme}: results in short {'regenerated' if changed else 'already agreed with the pages'}")
