"""The transformer report: rows from the studies' JSON files, the targets
met or missed, missing inputs named."""

import json

from experiments.transformers.report import transformer_report_command


def write(path, value):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))


def scores(f, wps=None):
    return {"p": f + 0.01, "r": f - 0.01, "f": f, **({} if wps is None else {"words_per_second": wps})}


def test_rows_targets_and_missing_inputs(tmp_path):
    metrics, models = tmp_path / "metrics", tmp_path / "training"
    write(
        metrics / "transformer" / "nested" / "evaluation.json",
        {"models": {"genia_quadratic": {"0": scores(0.80, 1500.0)}, "genia_spancat": {"0": scores(0.78, 900.0)}}},
    )
    write(
        models / "transformer" / "nested" / "train_seconds.json",
        {
            "steps": 1500,
            "transformer": "data/models/all-MiniLM-L6-v2/",
            "seconds": {"0": {"genia_quadratic": 1800.0, "genia_spancat": 1200.0}},
        },
    )
    write(
        metrics / "transformer" / "study" / "evaluation.json",
        {
            "models": {
                "dgm+dep@pretrained": {"0": {"test_pretrained": scores(0.70)}},
                "ner@pretrained": {"0": {"test_pretrained": scores(0.69)}},
            }
        },
    )
    write(
        metrics / "transformer" / "study" / "speed.json", {"models": {"dgm+dep@pretrained": {"words_per_second": 1234}}}
    )
    write(
        metrics / "nested" / "evaluation.json",  # the CNN: three seeds of the quadratic model
        {"models": {"genia_quadratic": {"0": scores(0.70), "1": scores(0.72), "2": scores(0.74)}}},
    )
    output = tmp_path / "report.md"
    transformer_report_command(metrics, models, output)
    text = output.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| GENIA") or line.startswith("| UNER")]
    assert len(rows) == 5  # 2 transformer + 1 CNN on GENIA, 2 transformer on EWT
    quadratic = next(r for r in rows if "quadratic" in r and "all-MiniLM-L6-v2" in r)
    assert "| 80.00 |" in quadratic and "1,500" in quadratic and "| 30.00 |" in quadratic  # F, words/s, minutes
    cnn = next(r for r in rows if "quadratic" in r and "cnn" in r)
    assert "72.00 ± 2.00" in cnn and "| 3 |" in cnn
    assert "vs spancat, both on the transformer: 80.00 vs 78.00, +2.00 (target ≥ +1.5: met)" in text
    assert "on the transformer vs on the CNN: 80.00 vs 72.00, +8.00 (target ≥ +2.0: met)" in text
    assert "70.00 vs 69.00, +1.00 (target ≥ +2.0: missed)" in text
    assert "study/evaluation.json" in text.split("Not found")[1]  # the CNN's EWT results were not given
