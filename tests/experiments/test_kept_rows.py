"""A report publishes over its page without losing what it did not measure
(experiments/publish/kept_rows.py): a GENIA-only nested report keeps GUM's rows,
each row says its run, and the published nested page and the README hold GUM."""

from pathlib import Path

from experiments.publish.kept_rows import with_kept_rows
from experiments.publish.results import publish
from experiments.publish.summary import markdown_tables

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## P/R/F on test (percent)"
OLD = (
    "# Nested\n\n    The report wrote on 2026-11-26, published.\n\n"
    f"{HEADING}\n\n| corpus | model | trees | test F | test F with heads |\n|---|---|---|---|---|\n"
    "| gum | hypergraph_ner with heads | – | 58.92 ± 0.34 | 57.77 ± 0.25 |\n"
    "| genia | nested_ner cyk | – | 72.44 ± 0.13 | – |\n\n## Other\n\ntext\n"
)
NEW = (
    "# Nested\n\n"
    f"{HEADING}\n\n| corpus | model | trees | test F |\n|---|---|---|---|\n"
    "| genia | nested_ner cyk | – | 73.15 ± 0.20 |\n| genia | spaCy spancat | – | 72.02 ± 0.37 |\n\n## Other\n\ntext\n"
)


def test_rows_the_new_report_lacks_are_kept_with_their_run():
    page = with_kept_rows(NEW, OLD, "2026-11-27")
    (rows,) = markdown_tables(page)
    assert [(row["corpus"], row["model"], row["test F"], row["run"]) for row in rows] == [
        ("genia", "nested_ner cyk", "73.15 ± 0.20", "2026-11-27"),  # measured again: the new figure only
        ("genia", "spaCy spancat", "72.02 ± 0.37", "2026-11-27"),
        ("gum", "hypergraph_ner with heads", "58.92 ± 0.34", "2026-11-26"),
    ]
    assert rows[0]["test F with heads"] == "–" and rows[2]["test F with heads"] == "57.77 ± 0.25"
    assert page.endswith("## Other\n\ntext\n")


def test_a_report_measuring_everything_again_replaces_the_table():
    assert with_kept_rows(NEW, NEW.replace("# Nested", "# Nested (wrote on 2026-11-01)"), "2026-11-27") == NEW


def test_publish_keeps_the_nested_page_rows_of_a_corpus_not_run(tmp_path):
    metrics, docs = tmp_path / "metrics", tmp_path / "docs" / "results"
    (metrics / "nested").mkdir(parents=True)
    docs.mkdir(parents=True)
    (metrics / "nested" / "report.md").write_text(NEW)
    (docs / "nested.md").write_text(OLD)
    publish(metrics, docs)
    rows = markdown_tables((docs / "nested.md").read_text())[0]
    assert {row["corpus"] for row in rows} == {"genia", "gum"}


def test_the_nested_page_and_the_readme_hold_gum():
    rows = [row for table in markdown_tables((ROOT / "docs" / "results" / "nested.md").read_text()) for row in table]
    gum = {row["model"]: row["test F"] for row in rows if row.get("corpus") == "gum"}
    assert gum["spaCy spancat"].startswith("53.05")
    assert gum["hypergraph_ner with heads + dependency features, penalty tuned on dev (MH (F))"].startswith("58.92")
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    assert "| UD English-GUM (nested, 10 types) | [nested](docs/results/nested.md) |" in readme
