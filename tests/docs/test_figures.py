"""Every figure the documentation quotes comes from the generated results
pages, page and navigation titles are unique, links point at files of the
repository (experiments/publish/quoted_figures.py), and the pages that
publish-results writes from other pages are as it writes them."""

import re
import shutil
from pathlib import Path

from experiments.publish import speeds
from experiments.publish.quoted_figures import broken_links, duplicate_titles, quoted_figures, unheld_figures
from experiments.publish.site_pages import nav_titles, results_index, results_pages
from experiments.publish.targets import filled_targets

ROOT = Path(__file__).resolve().parents[2]
FIX = "generate the figure (python -m experiments publish-results METRICS docs/results --readme README.md), or quote it through <!-- speeds: BENCHMARK --> or a link to the results page"


def test_every_quoted_figure_is_in_a_generated_table():
    assert not unheld_figures(ROOT), f"{unheld_figures(ROOT)}: {FIX}"


def test_page_and_navigation_titles_are_unique():
    assert not duplicate_titles(ROOT)


def test_links_point_at_files_of_the_repository():
    assert not broken_links(ROOT)


def test_figures_in_a_results_context_are_found_and_others_are_not():
    text = (
        "The pipeline annotates 12,345 words/s and reaches F1 of 73.29, or 64.60 ± 2.31 test F1.\n"
        "It ran 42.4 s on 310,964 words; 0.44× the words/s; `--rate 1.25`; +0.62 points.\n"
        "\n"
        "| model | words/s | ΔF | notes |\n"
        "|---|---|---|---|\n"
        "| a | 9,120 | +10.61 | 1,000 steps |\n"
    )
    assert [figure for _, figure in quoted_figures(text)] == ["12,345", "73.29", "64.60", "2.31", "9,120"]
    assert [line for line, _ in quoted_figures(text)][-1] == 6


def test_a_figure_missing_from_the_tables_is_reported(tmp_path):
    shutil.copytree(ROOT / "docs" / "results", tmp_path / "docs" / "results")
    (tmp_path / "docs" / "results" / "held.md").write_text(
        "# Held\n\n| pipeline | words/s |\n|---|---|\n| a | 22,358 |\n"
    )
    (tmp_path / "README.md").write_text("# Project\n\n| model | test F |\n|---|---|\n| a | 73.29 ± 0.40 |\n")
    guide = tmp_path / "docs" / "guides" / "own.md"
    guide.parent.mkdir()
    guide.write_text("# Own guide\n\nIt runs at 8,585 words/s and at 22,358 words/s.\n")
    assert unheld_figures(tmp_path) == ["docs/guides/own.md:3: 8,585"]


def test_results_that_read_alike_without_their_details_keep_them_in_the_navigation():
    headings = ["Active learning, simulated (UNER English-EWT, CRF)", "Active learning, simulated (GENIA, nested)"]
    assert nav_titles(headings) == [
        "Active learning, simulated (UNER English-EWT)",
        "Active learning, simulated (GENIA)",
    ]
    assert nav_titles(["Speed (2026-11-26, x86_64)", "Nested (2026-11-27)"]) == ["Speed", "Nested"]


def test_the_results_overview_is_as_publish_writes_it():
    written = (ROOT / "docs" / "results" / "index.md").read_text(encoding="utf8")
    assert written == results_index(results_pages(ROOT / "docs")), "run python -m experiments publish-results"


def test_the_speed_table_holds_the_rows_of_the_published_pages(tmp_path):
    folder = shutil.copytree(ROOT / "docs" / "results", tmp_path / "results")
    before = speeds.read((folder / "speed.md").read_text(encoding="utf8"))
    speeds.rows_from_pages(folder)
    assert speeds.read((folder / "speed.md").read_text(encoding="utf8")) == before, "run publish-results"
    assert {row["benchmark"] for row in before} >= {speeds.BENCH, speeds.APPLY}


def test_no_target_says_not_measured_when_the_pages_hold_both_figures(tmp_path):
    folder = shutil.copytree(ROOT / "docs" / "results", tmp_path / "results")
    assert filled_targets(folder) == [], "run publish-results: a target's figures are both on the published pages"


def test_a_comparison_has_one_difference_on_the_readme_and_its_page():
    """The README's ΔF of a comparison is the one its page states (rounded once from the runs' figures), not the
    difference of two rounded figures (+2.21 beside the page's +2.20)."""
    from experiments.publish.summary import START, markdown_tables, stated_difference

    readme = (ROOT / "README.md").read_text(encoding="utf8")
    (rows,) = markdown_tables(readme.split(START, 1)[1])[:1]
    compared = 0
    for row in rows:
        page = (ROOT / "docs" / "results" / f"{row['page'].split('](')[0].strip('[')}.md").read_text(encoding="utf8")
        ours, theirs = (re.search(r"`([^`]+)`[^\d]*([\d.]+)", row[c]).groups() for c in ("here (best on dev)", "spaCy"))
        stated = stated_difference(page, ours[0], theirs[0], ours[1], theirs[1])
        if stated is not None:
            compared += 1
            assert float(row["ΔF"]) == stated, (row["corpus"], row["ΔF"], stated)
    assert compared >= 2  # the pretrained first stage's significance table, the transformer page's target


def test_the_sides_of_a_comparison_in_prose_are_quoted_figures():
    text = (
        "It took 12.6 s against 6.0 s once compiled.\n"
        "Test F1 73.76 with it against 71.91 without.\n"
        "That took 10.1 s for 77,741 words, against 7.8 s for annotating them.\n"
    )
    assert [figure for _, figure in quoted_figures(text)] == ["12.6", "6.0", "73.76", "71.91"]


def test_the_cold_start_benchmark_has_a_results_page_to_quote():
    from experiments.publish.results import REPORTS

    assert any(report.source == "cold_start.md" and "bench-cold-start" in report.written_by for report in REPORTS)
