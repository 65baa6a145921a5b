"""The one table of words/s (experiments/publish/speeds.py): each benchmark
replaces its own rows only, the table is put into a page that has none, the
rows of a bench report and of the study pages carry their setting, and the
transformer page's missing CNN target is filled from the nested page."""

from pathlib import Path

from experiments.publish import speeds
from experiments.publish.summary import markdown_tables
from experiments.publish.targets import filled_targets
from experiments.transformers.report import NOT_MEASURED, TARGETS

ROOT = Path(__file__).resolve().parents[2]
BENCH_REPORT = (
    "# spacy-depner speed (2026-01-31, x86_64, 8 cores, 1,234 words of dev.conllu)\n\n"
    "## Pipeline words/s (given trees)\n\n"
    "| pipeline | words/s | ratio vs ner |\n|---|---|---|\n"
    "| tok2vec + ner | 10,000 | 1.00 |\n| tok2vec + dgm_ner | 11,000 | 1.10 |\n\n"
    "## Decoder only\n\n| structure | viterbi |\n|---|---|\n| dgm | 5,000 |\n"
)


def test_a_benchmark_replaces_its_own_rows_and_keeps_the_others(tmp_path):
    page = tmp_path / "speed.md"
    page.write_text(BENCH_REPORT)
    speeds.record(page, speeds.APPLY, [{"pipeline": "p", "processes": "1", "words/s": "8,000"}])
    speeds.record(page, speeds.BENCH, speeds.bench_report_rows(BENCH_REPORT))
    speeds.record(page, speeds.APPLY, [{"pipeline": "p", "processes": "2", "words/s": "15,000"}])
    rows = speeds.read(page.read_text())
    assert [(row["benchmark"], row["words/s"]) for row in rows] == [
        (speeds.BENCH, "10,000"),
        (speeds.BENCH, "11,000"),
        (speeds.APPLY, "15,000"),
    ]
    assert rows[0]["parser"] == "none (given trees)" and rows[0]["weights"] == "untrained"
    assert rows[0]["machine"] == "2026-01-31, x86_64, 8 cores" and rows[0]["corpus"] == "1,234 words of dev.conllu"
    text = page.read_text()
    assert text.startswith("# spacy-depner speed") and text.index(speeds.TITLE) < text.index("## Pipeline words/s")
    assert "| dgm | 5,000 |" in text  # the report's own tables stay


def test_apply_rows_name_processes_and_ray_actors():
    rows = speeds.apply_rows(
        [
            {"command": "apply --n-process 2", "words/s": "1,000"},
            {"command": "apply-ray --actors 4", "words/s": "2,000"},
        ],
        "pipe",
        "corpus",
        "machine",
    )
    assert [row["processes"] for row in rows] == ["2", "4 Ray actors"]
    assert all(row["parser"] == "en_core_web_sm" and row["weights"] == "trained" for row in rows)


def test_page_rows_skip_rows_without_a_speed():
    page = (
        "# Nested (2026-01-31, x86_64, 2 cores)\n\n| corpus | model | test F | words/s (seed 0) |\n|---|---|---|---|\n"
        "| genia | nested_ner quadratic | 73.00 | 20,000 |\n| genia | spaCy spancat | 72.00 | – |\n"
    )
    (row,) = speeds.page_rows(page, speeds.nested_setting)
    assert row["pipeline"] == "nested_ner quadratic" and row["words/s"] == "20,000"
    assert row["machine"] == "2026-01-31, x86_64, 2 cores" and row["corpus"] == "genia test"


def test_the_missing_cnn_target_is_filled_from_the_nested_page(tmp_path):
    title = next(t[0] for t in TARGETS if t[4] == "cnn")
    header = "| corpus | model | encoder | test F |\n|---|---|---|---|\n"
    (tmp_path / "transformers.md").write_text(
        f"# T\n\n{header}| GENIA | nested_ner quadratic | MiniLM | 75.00 |\n\n## Targets\n\n- {title}: {NOT_MEASURED}\n"
    )
    (tmp_path / "nested.md").write_text(
        "# N\n\n| corpus | model | test F |\n|---|---|---|\n| genia | nested_ner quadratic | 72.50 ± 0.40 |\n"
    )
    assert len(filled_targets(tmp_path)) == 1
    text = (tmp_path / "transformers.md").read_text()
    assert f"- {title}: 75.00 vs 72.50 (" in text and "+2.50 (target ≥ +2.0: met)" in text
    assert NOT_MEASURED not in text and markdown_tables(text)[0][0]["test F"] == "75.00"


def test_no_benchmark_writes_the_speed_page():
    """A benchmark writes where it is told (its --output and the rows beside it); only publish-results changes
    the speed page."""
    import inspect

    from experiments.bench.apply import bench_apply
    from experiments.bench.dgm import bench

    for command in (bench, bench_apply):
        defaults = [getattr(p.default, "default", p.default) for p in inspect.signature(command).parameters.values()]
        assert not any("docs" in Path(str(value)).parts for value in defaults if value is not None), command
    for path in (ROOT / "experiments" / "bench").glob("*.py"):
        assert "speeds.record(" not in path.read_text(encoding="utf8"), path


def test_publish_puts_a_benchmarks_rows_on_the_speed_page(tmp_path):
    metrics, page = tmp_path / "metrics", tmp_path / "speed.md"
    page.write_text(BENCH_REPORT)
    speeds.record(page, speeds.BENCH, speeds.bench_report_rows(BENCH_REPORT))
    rows = speeds.apply_rows([{"command": "apply --n-process 2", "words/s": "1,000"}], "pipe", "corpus", "machine")
    speeds.write_rows(metrics / "bench_apply.md", speeds.APPLY, rows)
    assert (metrics / "bench_apply.speed_rows.json").is_file() and page.read_text().count("| bench-apply |") == 0
    assert speeds.rows_from_reports(metrics, page)
    assert [(row["benchmark"], row["words/s"]) for row in speeds.read(page.read_text())] == [
        (speeds.BENCH, "10,000"),
        (speeds.BENCH, "11,000"),
        (speeds.APPLY, "1,000"),
    ]
