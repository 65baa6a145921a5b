"""``python -m experiments bench-types`` (Lu & Roth 2015, Table 3) end to end
on tiny settings: one row per number of types, positive figures, ratios of
1.00 for the baseline. No timing assertions."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

SENTENCES = [
    ("IL-7 gene expression and AP-kappa B activation .".split(), [(0, 2, "DNA"), (0, 1, "protein"), (4, 6, "protein")]),
    (
        "Activation of the CD28 surface receptor requires c-fos and c-jun genes .".split(),
        [(3, 6, "protein"), (3, 4, "protein"), (7, 11, "DNA"), (7, 8, "DNA"), (9, 10, "protein")],
    ),
    ("Both human T cells and mouse B cells were used .".split(), [(1, 8, "cell_type"), (2, 4, "cell_type")]),
    ("No mention here .".split(), []),
]


def write_genia(path):
    with path.open("w", encoding="utf8") as out:
        for i, (words, mentions) in enumerate(SENTENCES):
            entities = [{"start": s, "end": e, "type": t, "text": " ".join(words[s:e])} for s, e, t in mentions]
            record = {
                "doc_id": f"MEDLINE:{i:08d}",
                "sent_id": f"MEDLINE:{i:08d}-0",
                "tokens": words,
                "entities": entities,
            }
            out.write(json.dumps(record) + "\n")


def tables(text):
    """The markdown tables of the file, each as (header, rows) of cells."""
    found = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line.startswith("|")]
        if lines:
            split = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
            assert set(split[1]) == {"---"}
            found.append((split[0], split[2:]))
    return found


@pytest.mark.slow
def test_bench_types_table(tmp_path):
    genia = tmp_path / "genia.jsonl"
    write_genia(genia)
    output = tmp_path / "metrics" / "bench_types.md"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments",
            "bench-types",
            "--types",
            "1,2",
            "--tokens",
            "2000",
            "--repeats",
            "1",
            "--batch-size",
            "2",
            "--jsonl",
            str(genia),
            "--output",
            str(output),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    text = output.read_text(encoding="utf8")
    assert text.startswith("# ") and "Table 3" in text.splitlines()[0]
    assert text.strip() in done.stdout
    (decoders, decoder_rows), (pipelines, pipeline_rows) = tables(
        text
    )  # two tables of at most 7 columns, one row per T
    assert decoders[0] == pipelines[0] == "T" and max(len(decoders), len(pipelines)) <= 7
    assert [row[decoders.index("chain tags")] for row in decoder_rows] == ["5", "9"]  # 1 + 4T BILOU tags
    assert any("pipeline words/s" in name for name in pipelines)
    for header, rows in ((decoders, decoder_rows), (pipelines, pipeline_rows)):
        assert [row[0] for row in rows] == ["1", "2"]
        for row in rows:
            assert len(row) == len(header)
            for name, cell in zip(header, row):
                value = float(cell.replace(",", ""))
                assert value >= 0 if name.endswith("mentions/word") else value > 0, (name, cell)
    # zeroed output layers (the default): all scores 0, no mention predicted at any T
    assert [
        row[pipelines.index(name)]
        for row in pipeline_rows
        for name in ("hypergraph mentions/word", "chain mentions/word")
    ] == ["0.00"] * 4
    for header, rows in ((decoders, decoder_rows), (pipelines, pipeline_rows)):
        ratios = [name for name in header if name.endswith("vs T=1")]
        assert len(ratios) == 2  # two decoders, two pipelines
        assert all(rows[0][header.index(name)] == "1.00" for name in ratios)


@pytest.mark.slow
def test_bench_types_rejects_bad_types(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments",
            "bench-types",
            "--types",
            "5,0",
            "--jsonl",
            str(tmp_path / "genia.jsonl"),
            "--output",
            str(tmp_path / "out.md"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode != 0
    assert "positive" in done.stderr
    assert not (tmp_path / "out.md").exists()
