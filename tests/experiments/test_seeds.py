"""Seeds in the studies without training: the mean ± sd cells against
hand-computed values, the --seeds lists and seed folders, the run layout
of run_seeds, the max-p summary of per-seed tests, and the report tables
built from hand-made per-seed results."""

import json
import sys

import numpy as np
import pytest

from experiments.dgm import report as dgm_report
from experiments.kit import runs
from experiments.kit.runs import finished, run_seeds, train_command
from experiments.kit.seed_tests import over_seeds, significance_per_seed
from experiments.kit.seeds import chosen_seeds, parse_seeds, pick_names, seed_folder, trained_names
from experiments.kit.tables import mean_sd, seeds_caption
from experiments.nested import report as nested_report
from experiments.nested import study as nested_study
from experiments.two_stage import study as two_stage_study
from spacy_depner.evaluation.significance import approximate_randomization, paired_bootstrap


@pytest.mark.parametrize(
    "values, scale, expected",
    [
        ([0.80, 0.90, 0.85], 100, "85.00 ± 5.00"),  # deviations -5, 5, 0: sd = sqrt(50 / 2)
        ([1.0, 2.0, 4.0], 1, "2.33 ± 1.53"),  # mean 7/3; squares 16/9 + 1/9 + 25/9 = 42/9, / 2, sqrt = 1.5275
        ([1000.0, 3000.0], 1, "2,000 ± 1,414"),  # sd = 2000 / sqrt(2)
        ([0.50, 0.52], 1, "0.51 ± 0.01"),  # sd = 0.02 / sqrt(2): both parts with 2 decimals
        ([0.5, -0.5, 0.03], 1, "0.01 ± 0.50"),  # mean 0.01, deviations 0.49, -0.51, 0.02: sd = sqrt(0.5006 / 2)
        ([0.050, 0.054, 0.058], 1, "0.054 ± 0.004"),  # both below 0.1: 3 significant digits each
        ([7.0, 7.0], 1, "7.00 ± 0.00"),
    ],
)
def test_mean_sd_against_hand_computed_values(values, scale, expected):
    assert mean_sd(values, scale) == expected


def test_mean_sd_of_one_seed_is_the_value_and_missing_figures():
    assert mean_sd([812]) == 812
    assert mean_sd([0.25], 100) == 25.0
    assert mean_sd([None, None]) is None
    with pytest.raises(ValueError, match="missing for 1 of 2 seeds"):
        mean_sd([0.5, None])


def test_seeds_caption_names_count_and_seeds():
    assert seeds_caption([0, 1, 2]) == "Mean ± sample standard deviation (ddof=1) over 3 training seeds (0, 1, 2)."
    assert seeds_caption(["4"]) == "One training seed (4)."
    assert (
        seeds_caption([0, 1], "Wall time")
        == "Wall time: mean ± sample standard deviation (ddof=1) over 2 training seeds (0, 1)."
    )


def test_parse_seeds():
    assert parse_seeds("0,1,2") == [0, 1, 2]
    assert parse_seeds(" 2, 0") == [0, 2]
    assert parse_seeds(0) == [0]  # spacy project passes --vars.seeds 0 as a number
    for bad in ("", "a", "1,,2", "-1", "1.5"):
        with pytest.raises(ValueError, match="non-negative integers"):
            parse_seeds(bad)
    with pytest.raises(ValueError, match="twice"):
        parse_seeds("1,1")


def test_chosen_seeds_finds_or_checks_the_seed_folders(tmp_path):
    with pytest.raises(ValueError, match="no seed_<s> folder"):
        chosen_seeds(tmp_path)
    for name in ("seed_2", "seed_0", "logs", "seed_x"):
        (tmp_path / name).mkdir()
    (tmp_path / "seed_5").write_text("a file, not a folder")
    assert chosen_seeds(tmp_path) == [0, 2]
    assert chosen_seeds(tmp_path, "2") == [2]
    with pytest.raises(ValueError, match=r"no pipelines of seed 1 in .* \(it holds 0, 2\)"):
        chosen_seeds(tmp_path, "0,1")
    assert seed_folder(tmp_path, 3) == tmp_path / "seed_3"


def test_train_command_sets_the_system_seed(tmp_path):
    command = train_command(tmp_path / "a.cfg", tmp_path / "out", tmp_path, 8, 0, ["--x", "y"], seed=3)
    assert command[command.index("--system.seed") + 1] == "3"
    assert command[-2:] == ["--x", "y"]
    assert "--system.seed" not in train_command(tmp_path / "a.cfg", tmp_path / "out", tmp_path, 8, 0, [])


def test_run_seeds_logs_and_seconds_per_seed(tmp_path):
    def echo(text):
        return [sys.executable, "-c", f"print({text!r})"]

    runs = {seed: {name: echo(f"{name} {seed}") for name in ("parser", "dgm")} for seed in (0, 3)}
    seconds = run_seeds(runs, tmp_path, jobs=2, steps=5)
    for seed in (0, 3):
        for name in ("parser", "dgm"):
            assert (tmp_path / f"seed_{seed}" / "logs" / f"{name}.log").read_text() == f"{name} {seed}\n"
    written = json.loads((tmp_path / "train_seconds.json").read_text())
    assert written["steps"] == 5 and written["seeds"] == [0, 3]
    assert set(written["seconds"]) == {"0", "3"} and set(written["seconds"]["3"]) == {"parser", "dgm"}
    assert written["seconds"] == seconds
    failing = {1: {"bad": [sys.executable, "-c", "raise SystemExit(2)"]}}
    with pytest.raises(RuntimeError, match=r"exit 2.*seed_1/logs/bad.log"):
        run_seeds(failing, tmp_path, jobs=1)


def test_over_seeds_against_hand_made_p_values():
    results = {
        "0": {"delta": 0.10, "p_value": 0.01},
        "1": {"delta": -0.05, "p_value": 0.20},
        "2": {"delta": 0.02, "p_value": 0.03},
    }
    summary = over_seeds(results)
    assert summary["max_p"] == 0.20 and summary["significant"] == 2 and summary["a_better"] == 2
    assert (
        summary["seeds"] == 3 and summary["deltas"] == [0.10, -0.05, 0.02] and summary["p_values"] == [0.01, 0.20, 0.03]
    )
    with pytest.raises(ValueError, match="at least one seed"):
        over_seeds({})


def certain_pairs():
    """Seed "0": A finds the one entity of each of 20 sentences, B none of them
    (every bootstrap resample has F1(A) = 1 > F1(B) = 0: p = 0); seed "1": A
    and B identical (delta = 0: p = 1 by the bootstrap's convention, and by
    approximate randomization, where every shuffle ties)."""
    right, wrong = np.tile([1, 0, 0], (20, 1)), np.tile([0, 1, 1], (20, 1))
    return {"0": (right, wrong), "1": (right, right.copy())}


def test_significance_per_seed_max_p_against_hand_computed_p_values():
    summary = over_seeds(significance_per_seed(paired_bootstrap, certain_pairs(), n_samples=200))
    assert summary["p_values"] == [0.0, 1.0] and summary["deltas"] == [1.0, 0.0]
    assert summary["max_p"] == 1.0 and summary["significant"] == 1 and summary["a_better"] == 1
    randomization = over_seeds(significance_per_seed(approximate_randomization, certain_pairs(), n_iterations=99))
    assert randomization["p_values"][1] == 1.0 and randomization["max_p"] == 1.0
    assert randomization["p_values"][0] < 0.05  # 20 swaps of one sentence each: |delta'| = 1 only when none or all swap


def table_rows(text, after):
    """The rows (lists of cells) of the first markdown table after the line ``after``."""
    lines = text.split(after, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    block = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        block.append([cell.strip() for cell in line.strip("|").split("|")])
    return block[0], block[2:]


def prf(f, counts):
    return {"p": f, "r": f, "f": f, "sentence_counts": counts}


def test_dgm_tables_from_two_seeds():
    right, wrong = np.tile([1, 0, 0], (20, 1)).tolist(), np.tile([0, 1, 1], (20, 1)).tolist()
    models = {}
    for model in dgm_report.MODELS:
        f = {"0": 0.5, "1": 0.7} if model.name == "dgm" else {"0": 0.6, "1": 0.6}
        counts = {"0": right, "1": wrong} if model.name == "dgm" else {"0": wrong, "1": wrong}
        models[model.name] = {
            s: {
                f"{split}_{trees}": prf(f[s], counts[s])
                for split in ("dev", "test")
                for trees in ("given", "predicted")
            }
            for s in ("0", "1")
        }
    evaluation = {"seeds": [0, 1], "models": models}
    text = dgm_report.prf_tables(evaluation)
    assert "over 2 training seeds (0, 1)" in text
    header, rows = table_rows(text, "Table 3")
    dgm = next(row for row in rows if row[:2] == ["given", "DGM"])
    assert dgm[header.index("test F")] == "60.00 ± 14.14"  # 50 and 70: sd = 20 / sqrt(2)
    semi = next(row for row in rows if row[:2] == ["given", "semi-Markov CRF (L=8)"])
    assert semi[header.index("dev P")] == "60.00 ± 0.00"
    header, rows = table_rows(dgm_report.significance_table(evaluation, 100), "paired bootstrap")
    row = next(row for row in rows if row[:2] == ["dgm vs semi_crf", "given"])
    # seed 0: dgm right everywhere, semi_crf wrong (delta 100, p 0); seed 1: both wrong (delta 0, p 1)
    assert row[2:] == ["50.00 ± 70.71", "1/2", "1.000", "1/2"]


def test_nested_and_two_stage_tables_from_two_seeds(tmp_path):
    result = {"trees": "given", "p": 0.5, "r": 0.5, "f": 0.5, "words_per_second": 100.0}
    evaluation = {
        "split": "test",
        "seeds": [0, 2],
        "models": {
            "gum_quadratic": {"0": result, "2": {**result, "f": 0.6, "words_per_second": 50.0}},
            "gum_quadratic_dgm": {"0": {**result, "f": 0.7, "words_per_second": 300.0}, "2": {**result, "f": 0.7}},
        },
    }
    header, rows = table_rows(
        nested_report.results_table(evaluation, {"0": {"gum_quadratic": 10.0}, "2": {"gum_quadratic": 20.0}}),
        "seeds (0, 2)",
    )
    assert "words/s (seed 0)" in header and "dev F" not in header
    plain = next(row for row in rows if row[1] == "nested_ner quadratic")
    assert plain[header.index("test F")] == "55.00 ± 7.07" and plain[header.index("words/s (seed 0)")] == "100.00"
    assert plain[header.index("training s")] == "15.00 ± 7.07"
    assert "test F with heads" not in header  # no model has heads: the column is left out
    dev = {
        "split": "dev",
        "seeds": [0, 2],
        "models": {"gum_quadratic": {"0": {**result, "f": 0.3}, "2": {**result, "f": 0.4}}},
    }
    # seed 0's training time unknown (a run kept by --resume): no time, where a missing score would be an error
    header, rows = table_rows(
        nested_report.results_table(evaluation, {"0": {"gum_quadratic": None}, "2": {"gum_quadratic": 20.0}}, dev),
        "seeds (0, 2)",
    )
    assert header[3] == "dev F"
    assert [row[3] for row in rows] == ["35.00 ± 7.07", "–"]  # the guided model was not evaluated on dev
    assert "training s" not in header  # no model's time known for every seed: the column is left out
    with pytest.raises(ValueError, match="same --seeds"):
        nested_report.results_table(evaluation, {}, {**dev, "seeds": [0]})
    header, rows = table_rows(nested_report.guidance_table(evaluation), "seed 0 only")
    assert rows[0][header.index("ΔF")] == "15.00 ± 7.07"  # 20 and 10
    assert rows[0][header.index("speed ratio")] == "3.00"  # seed 0: 300 / 100
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    stage = {"0": {"p": 0.4, "r": 0.4, "f": 0.4}, "1": {"p": 0.6, "r": 0.6, "f": 0.6}}
    (metrics / "evaluation.json").write_text(
        json.dumps(
            {
                "corpus": "ewt",
                "split": "test",
                "documents": 2,
                "words": 30,
                "corpus_counts": "training",
                "seeds": [0, 1],
                "first_stage": stage,
                "two_stage": stage,
                "approximate_randomization": {
                    "0": {"delta": 0.01, "p_value": 0.04},
                    "1": {"delta": 0.02, "p_value": 0.5},
                },
                "speed": {
                    "seed": 0,
                    "time_ratio": 1.5,
                    "first_stage": {"words_per_second": 900},
                    "two_stage": {"words_per_second": 600},
                },
            }
        )
    )
    two_stage_study.report(metrics)
    header, rows = table_rows((metrics / "report.md").read_text(), "only.")
    assert rows[0][header.index("first F")] == "50.00 ± 14.14" and rows[0][header.index("seeds")] == "0, 1"
    assert [
        rows[0][header.index(name)] for name in ("largest p", "seeds with p < 0.05", "two-stage higher (seeds)")
    ] == ["0.500", "1/2", "2/2"]
    assert rows[0][header.index("ΔF")] == "1.50 ± 0.71"


def finish(folder, name, log="...\n✔ Saved pipeline to output directory\n"):
    (folder / name / "model-last").mkdir(parents=True)
    (folder / "logs").mkdir(exist_ok=True)
    (folder / "logs" / f"{name}.log").write_text(log)


def test_resume_finds_a_finished_run_in_its_seed_folder(tmp_path):
    folder = seed_folder(tmp_path, 2)
    finish(folder, "fold0")
    assert finished(folder, "fold0")
    assert not finished(seed_folder(tmp_path, 0), "fold0")  # another seed's run
    (folder / "logs" / "fold0.log").write_text("interrupted\n")
    assert not finished(folder, "fold0")


def test_resumed_run_seeds_trains_only_the_unfinished_runs_and_keeps_their_seconds(tmp_path, monkeypatch):
    trained = []
    monkeypatch.setattr(runs, "run_pool", lambda flat, jobs: trained.extend(flat) or {key: 7.0 for key in flat})
    (tmp_path / "train_seconds.json").write_text(json.dumps({"seconds": {"0": {"parser": 900.0, "dgm": 300.0}}}))
    finish(seed_folder(tmp_path, 0), "parser")
    finish(seed_folder(tmp_path, 0), "dgm")
    finish(seed_folder(tmp_path, 1), "parser")  # finished, but the previous run left no seconds for it
    finish(seed_folder(tmp_path, 1), "dgm", log="interrupted\n")
    commands = {seed: {name: ["train", name] for name in ("parser", "dgm", "semi_crf")} for seed in (0, 1)}
    seconds = run_seeds(commands, tmp_path, 2, resume=True, steps=5)
    assert sorted(trained) == [(0, "semi_crf"), (1, "dgm"), (1, "semi_crf")]
    expected = {
        "0": {"parser": 900.0, "dgm": 300.0, "semi_crf": 7.0},
        "1": {"parser": None, "dgm": 7.0, "semi_crf": 7.0},
    }
    assert seconds == expected
    assert json.loads((tmp_path / "train_seconds.json").read_text()) == {
        "steps": 5,
        "seeds": [0, 1],
        "seconds": expected,
    }
    # a resumed run of another model keeps these seconds, even those written after it started
    other = {0: {"ner": ["train", "ner"]}}
    assert run_seeds(other, tmp_path, 1, resume=True, steps=5) == {**expected, "0": {**expected["0"], "ner": 7.0}}
    assert json.loads((tmp_path / "train_seconds.json").read_text())["seconds"]["1"] == expected["1"]
    trained.clear()
    run_seeds(commands, tmp_path, 2, steps=5)  # without resume every run trains again
    assert len(trained) == 6


def test_pick_names_chooses_in_the_known_order_and_refuses():
    known = ["a", "b", "c"]
    assert pick_names("all", known) == known and pick_names(None, known) == known
    assert pick_names(" c,a ", known) == ["a", "c"]
    with pytest.raises(ValueError, match="--only: no model 'd'"):
        pick_names("a,d", known, "--only")
    with pytest.raises(ValueError, match="is empty"):
        pick_names(" ", known)


def test_trained_names_are_those_every_seed_holds(tmp_path):
    with pytest.raises(ValueError, match="no trained model"):
        trained_names(tmp_path, [0, 1], ["a", "b"])
    for seed in (0, 1):
        (seed_folder(tmp_path, seed) / "b" / "model-best").mkdir(parents=True)
    (seed_folder(tmp_path, 1) / "a" / "model-best").mkdir(parents=True)
    assert trained_names(tmp_path, [0, 1], ["c", "b"]) == ["b"]
    assert trained_names(tmp_path, [1], ["b", "a"]) == ["b", "a"]
    with pytest.raises(ValueError, match="a is trained for seed 1 but not for seed 0"):
        trained_names(tmp_path, [0, 1], ["a", "b"])


def test_nested_train_with_some_models_trains_the_parser_only_for_a_guided_one(tmp_path, monkeypatch):
    recorded = {}
    monkeypatch.setattr(
        nested_study, "run_seeds", lambda runs, output, jobs, **settings: recorded.update(runs=runs) or {}
    )
    common = dict(
        data=tmp_path,
        genia=None,
        output=tmp_path,
        configs=tmp_path,
        steps=2,
        parser_steps=2,
        limit=0,
        jobs=1,
        seeds="0,2",
    )
    nested_study.train(**common, models="gum_spancat,genia_quadratic")
    assert {seed: list(runs) for seed, runs in recorded["runs"].items()} == {
        0: ["genia_quadratic", "gum_spancat"],
        2: ["genia_quadratic", "gum_spancat"],
    }
    nested_study.train(**common, models="gum_quadratic_dgm")
    assert list(recorded["runs"][2]) == ["gum_parser", "gum_quadratic_dgm"]
    nested_study.train(**common, models="all")
    own = [
        model for model in nested_study.MODELS if not model.pretrained
    ]  # "all": the models in a pretrained pipeline are named
    assert len(recorded["runs"][0]) == len(own) + 1
    for name in ("genia_quadratic", "gum_spancat"):
        for seed in (0, 2):
            (seed_folder(tmp_path, seed) / name / "model-best").mkdir(parents=True)
    assert [m.name for m in nested_study.trained_models(tmp_path, [0, 2])] == ["genia_quadratic", "gum_spancat"]


def test_p_values_print_below_a_thousandth_as_such_and_with_three_decimals():
    from experiments.kit.tables import p_value

    assert [p_value(p) for p in (0.0, 0.0004, 0.001, 0.0123, 0.04, 0.5, 1.0, None)] == [
        "< 0.001",
        "< 0.001",
        "0.001",
        "0.012",
        "0.040",
        "0.500",
        "1.000",
        None,
    ]


def test_tables_name_every_column_and_leave_out_empty_ones():
    from experiments.kit.tables import table

    text = table(["model", "F", "ratio"], [["a", 0.5, None], ["b", 0.25, None]])
    assert text.splitlines()[:2] == ["| model | F |", "|---|---|"] and "–" not in text
    assert table(["model", "ratio"], [["a", None], ["b", 1.5]]).splitlines()[0] == "| model | ratio |"
    with pytest.raises(ValueError, match="needs a name"):
        table(["model", ""], [["a", "DGM"]])


def test_study_report_names_every_column_prints_p_values_and_links_every_output(tmp_path, monkeypatch):
    """metrics/study/report.md: the speed table's columns named, the semi-CRF ratio left out without a semi-CRF, the
    speed chart with a legend for its colours, and relative links to the confidence study's report and PNGs and to
    every other output of the workflow in the folder."""
    figures = []
    monkeypatch.setattr(dgm_report, "save_figure", lambda figure, path: figures.append(figure))
    speed = {
        "seed": 0,
        "models": {
            "dgm": {"seconds_per_iteration": 2.0, "words_per_second": 900.0},
            "chain_crf": {"seconds_per_iteration": 1.0, "words_per_second": 1200.0},
        },
    }
    text = dgm_report.speed_table(speed, {})
    header, rows = table_rows(text, "not recorded.")
    assert all(header) and "ratio vs semi-CRF" not in header and "–" not in text
    dgm_report.speed_chart(speed, tmp_path / "speed.png")
    legend = figures[0].axes[0].get_legend()
    assert legend is not None and len(legend.get_texts()) == 2
    metrics = tmp_path / "metrics"
    for name in (
        "coverage.json",
        "speed.png",
        "confidence/report.md",
        "confidence/png/dgm-threshold.png",
        "seed_0/x.json",
        "report.tmp-0123abcd.md",
    ):
        (metrics / name).parent.mkdir(parents=True, exist_ok=True)
        (metrics / name).write_text("x")
    from experiments.kit.outputs import write_linked_report

    written = write_linked_report(metrics / "report.md", "# Report\n")
    links = [line for line in written.splitlines() if line.startswith("- [")]
    assert links == [
        "- [confidence/png/dgm-threshold.png](confidence/png/dgm-threshold.png)",
        "- [confidence/report.md](confidence/report.md)",
        "- [coverage.json](coverage.json)",
        "- [speed.png](speed.png)",
    ]


def test_train_command_evaluates_every_eval_frequency_steps_and_at_least_four_times(tmp_path):
    def every(steps, eval_frequency=None):
        command = train_command(
            tmp_path / "a.cfg", tmp_path / "out", tmp_path, steps, 0, [], eval_frequency=eval_frequency
        )
        return int(command[command.index("--training.eval_frequency") + 1])

    assert every(10000) == 2500 and every(10000, 500) == 500
    assert every(1000, 500) == 250  # a short run still evaluates four times (model-best exists)
    assert every(3, 500) == 1 and every(3) == 1
