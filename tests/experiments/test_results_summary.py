"""The README's results in short: generated from the published results pages,
the structured model chosen on dev, rows missing from the pages named rather
than shown, and the README in agreement with the pages."""

from pathlib import Path

import pytest

from experiments.publish.summary import END, START, markdown_tables, readme_block, summary, write_summary

ROOT = Path(__file__).parents[2]
STUDY_HEADER = "| model | family | encoder | trees at test | dev F | test P | test R | test F |\n|---|---|---|---|---|---|---|---|\n"
NESTED_HEADER = "| corpus | model | trees | dev F | test P | test R | test F |\n|---|---|---|---|---|---|---|\n"


def pages(tmp_path, study="", nested=""):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "study.md").write_text(f"# Study\n\nSome text.\n\n{study}\nAfter.\n")
    (folder / "nested.md").write_text(f"# Nested\n\n{nested}\n")
    return folder


def test_the_readme_agrees_with_the_published_pages():
    readme = (ROOT / "README.md").read_text(encoding="utf8")
    assert readme_block(readme) == summary(ROOT / "docs" / "results"), (
        "README's results in short disagree with docs/results: run "
        "`python -m experiments publish-results metrics docs/results --readme README.md`"
    )


def test_the_model_best_on_dev_is_shown_not_the_best_on_test(tmp_path):
    study = STUDY_HEADER + (
        "| semi_crf+dep@pretrained-tok2vec | semi-CRF | t | p | 66.00 ± 0.50 | 70 | 60 | 65.00 ± 1.00 |\n"
        "| chain_crf@pretrained-tok2vec | CRF | t | p | 64.00 ± 0.50 | 70 | 60 | 71.00 ± 1.00 |\n"
        "| ner@pretrained-tok2vec | spaCy ner | t | p | 63.00 ± 0.50 | 70 | 60 | 64.50 ± 2.00 |\n"
    )
    text = summary(pages(tmp_path, study=study))
    (row,) = markdown_tables(text)[0]
    assert row["corpus"] == "UNER English-EWT, en_core_web_sm's trees and tok2vec"
    assert row["here (best on dev)"] == "`semi_crf+dep@pretrained-tok2vec` (semi-CRF) 65.00 ± 1.00"
    assert row["spaCy"] == "`ner@pretrained-tok2vec` (spaCy ner) 64.50 ± 2.00" and row["ΔF"] == "+0.50"
    assert "chain_crf@pretrained-tok2vec" not in text


def test_headlines_missing_from_the_pages_are_named_not_shown(tmp_path):
    # GENIA has its structured rows but no spancat row; GUM's spancat row must not stand in for GENIA's
    nested = NESTED_HEADER + (
        "| genia | nested_ner cyk | – | 74.00 ± 0.10 | 76 | 72 | 73.00 ± 0.20 |\n"
        "| gum | nested_ner cyk | – | 60.00 ± 0.10 | 62 | 58 | 59.00 ± 0.20 |\n"
        "| gum | spaCy spancat | – | 55.00 ± 0.10 | 60 | 50 | 54.50 ± 0.30 |\n"
    )
    text = summary(pages(tmp_path, nested=nested))
    (row,) = markdown_tables(text)[0]
    assert row["corpus"] == "UD English-GUM (nested, 10 types)" and row["ΔF"] == "+4.50"
    missing = text.splitlines()[-2]
    assert "GENIA (nested) (nested.md)" in missing and "en_core_web_sm's trees and tok2vec (study.md)" in missing


def test_write_summary_replaces_only_the_block_and_needs_the_markers(tmp_path):
    folder = pages(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\n{START}\nold figures\n{END}\n\n## Tests\n")
    assert write_summary(readme, folder)
    text = readme.read_text()
    assert "old figures" not in text and text.startswith("# Title\n\n") and text.endswith(f"{END}\n\n## Tests\n")
    assert not write_summary(readme, folder)  # already in agreement: unchanged
    readme.write_text("# Title\n")
    with pytest.raises(ValueError, match="markers"):
        write_summary(readme, folder)
