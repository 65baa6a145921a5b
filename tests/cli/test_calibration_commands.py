"""``python -m spacy_depner calibration``, ``calibrate`` and
``find-threshold`` end to end on tiny trained pipelines: the report's
numbers against spans collected here, the fitted temperature and the tuned
threshold saved and read back at load, and one-line errors for pipelines
without span probabilities."""

import json
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import DocBin
from tiny_corpus import SMALL_TOK2VEC, TINY, make_example, write_tiny_docbin

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run
from spacy_depner.evaluation.calibration import expected_calibration_error

DATA = Path(__file__).parents[1] / "data"
PROG = "python -m spacy_depner"


def run_ok(capsys, *args) -> dict:
    """Run the app on ``args``, check it succeeds; the JSON it printed."""
    status = run(app, [str(a) for a in args], PROG)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out)


def error_line(capsys, *args) -> str:
    """Run the app on ``args``, check the status is 1 and stderr one line; that line."""
    assert run(app, [str(a) for a in args], PROG) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.fixture(scope="module")
def tiny_docbin(tmp_path_factory) -> Path:
    """The tiny corpus (trees and entities) as a DocBin."""
    return write_tiny_docbin(tmp_path_factory.mktemp("data") / "tiny.spacy")


@pytest.fixture(scope="module")
def mixed_pipeline(tmp_path_factory) -> Path:
    """spaCy's ner and a dgm_ner over every span (no parse needed), trained on the tiny corpus."""
    from spacy.util import fix_random_seed

    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("ner")
    nlp.add_pipe(
        "dgm_ner",
        config={
            "suggester": {"@misc": "spacy_depner.all_spans_suggester.v1", "max_length": 4},
            "model": {"@architectures": "spacy_depner.SpanScorer.v1", "tok2vec": SMALL_TOK2VEC},
        },
    )
    examples = [make_example(nlp, *row) for row in TINY]
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(20):
        nlp.update(examples, sgd=optimizer)
    path = tmp_path_factory.mktemp("mixed") / "pipeline"
    nlp.to_disk(path)
    return path


def collected(pipeline: Path, docbin: Path):
    """The dgm_ner spans of the pipeline on the DocBin's words,
    collected here: probabilities, correctness, number of gold entities."""
    nlp = spacy.load(pipeline)
    references = list(DocBin().from_disk(docbin).get_docs(nlp.vocab))
    p, correct, n_gold = [], [], 0
    for reference in references:
        doc = nlp(spacy.tokens.Doc(nlp.vocab, words=[t.text for t in reference]))  # its parser makes the trees
        gold = {(e.start, e.end, e.label_) for e in reference.ents}
        n_gold += len(gold)
        group = doc.spans["dgm_ner"]
        p += [float(x) for x in group.attrs["scores"]] if len(group) else []
        correct += [(s.start, s.end, s.label_) in gold for s in group]
    return np.array(p), np.array(correct, dtype=bool), n_gold


def test_calibration_reports_each_file_pooled_files_and_diagrams(capsys, pipeline, tiny_docbin, tmp_path):
    pytest.importorskip("matplotlib")
    printed = run_ok(
        capsys,
        "calibration-report",
        pipeline,
        tiny_docbin,
        DATA / "tiny.conllu",
        "--iob2",
        DATA / "tiny.iob2",
        "--output",
        tmp_path / "report.json",
        "--png",
        tmp_path / "png",
        "--bins",
        10,
    )
    report = json.loads((tmp_path / "report.json").read_text())
    assert list(report["components"]) == ["dgm_ner"]  # the parser writes no spans
    entry = report["components"]["dgm_ner"]
    first, second = entry["per_file"]
    p, correct, n_gold = collected(pipeline, tiny_docbin)
    assert (first["spans"], first["correct"], first["gold"]) == (len(p), int(correct.sum()), n_gold) and len(p) > 0
    assert first["ece"] == pytest.approx(
        expected_calibration_error(p, correct, 10), abs=1e-5
    )  # batching: float32 noise
    assert first["p"] == pytest.approx(correct.mean()) and first["r"] == pytest.approx(correct.sum() / n_gold)
    assert second["gold"] == 5  # tiny.iob2: PER, LOC (s1); ORG, LOC (s2, its I-LOC after OTH starts one); LOC (s3)
    assert entry["all"]["spans"] == first["spans"] + second["spans"]
    assert sum(b["count"] for b in first["reliability"]) == first["spans"] and len(first["reliability"]) == 10
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == [
        "dgm_ner-all.png",
        "dgm_ner-tiny-0.png",
        "dgm_ner-tiny-1.png",
    ]
    assert (
        "reliability" not in printed["dgm_ner"]["per_file"][0]
        and printed["dgm_ner"]["all"]["ece"] == entry["all"]["ece"]
    )


def test_calibration_reports_that_spacy_ner_has_no_probabilities(capsys, mixed_pipeline, tiny_docbin, tmp_path):
    printed = run_ok(capsys, "calibration-report", mixed_pipeline, tiny_docbin, "--output", tmp_path / "r.json")
    assert printed["ner"]["probabilities"] is None and "no span probabilities" in printed["ner"]["reason"]
    assert printed["dgm_ner"]["per_file"][0]["spans"] > 0
    line = error_line(
        capsys, "calibration-report", mixed_pipeline, tiny_docbin, "--output", tmp_path / "r.json", "--component", "ner"
    )
    assert "no component of" in line and "'ner' (ner) writes no span probabilities" in line


@pytest.fixture(scope="module")
def ner_only(mixed_pipeline, tmp_path_factory) -> Path:
    nlp = spacy.load(mixed_pipeline)
    nlp.remove_pipe("dgm_ner")
    path = tmp_path_factory.mktemp("ner") / "pipeline"
    nlp.to_disk(path)
    return path


def test_a_pipeline_without_span_probabilities_is_one_line_error(capsys, ner_only, tiny_docbin, tmp_path):
    assert "writes no span probabilities" in error_line(
        capsys, "calibration-report", ner_only, tiny_docbin, "--output", tmp_path / "r.json"
    )
    assert not (tmp_path / "r.json").exists()
    for command in ("calibrate", "find-threshold"):
        line = error_line(capsys, command, ner_only, tiny_docbin, tmp_path / "out")
        assert "needs one component with span probabilities" in line and "it has none" in line
    line = error_line(capsys, "calibration-report", ner_only, tmp_path / "data.txt", "--output", tmp_path / "r.json")
    assert "unknown data file kind '.txt'" in line


needs_settings = pytest.mark.skipif(
    "temperature" not in spacy.blank("en").add_pipe("dgm_ner").settings,
    reason="the components have no temperature and threshold settings yet",
)


@needs_settings
def test_calibrate_fits_saves_and_loads_the_temperature(capsys, pipeline, tiny_docbin, tmp_path):
    printed = run_ok(capsys, "calibrate", pipeline, tiny_docbin, tmp_path / "calibrated")
    before, after = printed["before"], printed["after"]
    assert printed["component"] == "dgm_ner" and printed["before_temperature"] == 1.0
    assert 0.05 <= printed["temperature"] <= 20.0
    # T = 1 is on the search's grid: the fit never does worse; MAP spans do not move with T
    assert after["nll"] <= before["nll"] + 1e-6
    assert (after["spans"], after["correct"], after["f"]) == (before["spans"], before["correct"], before["f"])
    loaded = spacy.load(tmp_path / "calibrated")
    assert loaded.get_pipe("dgm_ner").settings["temperature"] == printed["temperature"]
    assert loaded.config["components"]["dgm_ner"]["temperature"] == printed["temperature"]
    # the saved pipeline decodes with the fitted temperature
    report = run_ok(capsys, "calibration-report", tmp_path / "calibrated", tiny_docbin, "--output", tmp_path / "r.json")
    assert report["dgm_ner"]["per_file"][0]["nll"] == pytest.approx(after["nll"], rel=1e-5)


@needs_settings
def test_tune_threshold_saves_the_f1_best_threshold(capsys, pipeline, tiny_docbin, tmp_path):
    pytest.importorskip("matplotlib")
    p, correct, n_gold = collected(pipeline, tiny_docbin)
    printed = run_ok(
        capsys,
        "find-threshold",
        pipeline,
        tiny_docbin,
        tmp_path / "tuned",
        "--step",
        0.05,
        "--png",
        tmp_path / "pr.png",
    )
    assert printed["before_threshold"] == 0.0 and printed["tuned_f"] >= printed["before_f"]
    # brute force over the same grid, with the spans collected here
    kept = lambda t: p.astype(np.float32) >= np.float32(t)  # noqa: E731  (as attrs["scores"] holds them)
    best = max(
        np.round(np.arange(0, 1.0001, 0.05), 10), key=lambda t: 2 * (correct & kept(t)).sum() / (kept(t).sum() + n_gold)
    )
    assert printed["tuned_threshold"] == pytest.approx(best)
    assert (tmp_path / "pr.png").read_bytes()[:4] == b"\x89PNG"
    loaded = spacy.load(tmp_path / "tuned")
    assert loaded.config["components"]["dgm_ner"]["threshold"] == printed["tuned_threshold"]
    report = run_ok(capsys, "calibration-report", tmp_path / "tuned", tiny_docbin, "--output", tmp_path / "r.json")
    assert report["dgm_ner"]["per_file"][0]["f"] == pytest.approx(printed["tuned_f"])
    assert all(
        s["lower"] >= printed["tuned_threshold"] - 1 / 15 or s["count"] == 0
        for s in json.loads((tmp_path / "r.json").read_text())["components"]["dgm_ner"]["per_file"][0]["reliability"]
    )
    line = error_line(capsys, "find-threshold", pipeline, tiny_docbin, tmp_path / "x", "--component", "parser")
    assert "'parser'" in line and "no span probabilities" in line


@needs_settings
def test_spacy_find_threshold_tunes_the_same_setting(capsys, pipeline, tiny_docbin, tmp_path):
    """spaCy's `spacy find-threshold` (decoding again at each threshold)
    finds the threshold and F1 that `find-threshold` finds from one decoding."""
    from spacy.cli.find_threshold import find_threshold

    arguments = (pipeline, tiny_docbin, "dgm_ner", "threshold", "ents_f", "-n", 5)  # spaCy's, in its order
    ours = run_ok(capsys, "find-threshold", *arguments)
    assert not (tmp_path / "tuned").exists()
    best, f, scores = find_threshold(pipeline, tiny_docbin, "dgm_ner", "threshold", "ents_f", n_trials=5, silent=True)
    capsys.readouterr()  # spaCy's table of scores
    assert len(set(scores.values())) > 1  # the setting changes what is written
    assert best == pytest.approx(ours["tuned_threshold"]) and f == pytest.approx(ours["tuned_f"])
    # --output saves the pipeline with it; the earlier form PIPELINE DATA OUTPUT --step, with a warning
    assert run_ok(capsys, "find-threshold", *arguments, "-o", tmp_path / "tuned") == ours
    assert spacy.load(tmp_path / "tuned").get_pipe("dgm_ner").settings["threshold"] == ours["tuned_threshold"]
    with pytest.warns(FutureWarning, match="PIPE_NAME threshold SCORES_KEY --output OUTPUT"):
        assert run_ok(capsys, "find-threshold", pipeline, tiny_docbin, tmp_path / "old", "--step", 0.25) == ours
    assert (tmp_path / "old" / "config.cfg").is_file()


@needs_settings
def test_spacy_find_threshold_tunes_the_same_posterior_penalty(capsys, pipeline, tiny_docbin, tmp_path):
    """THRESHOLD_KEY posterior_penalty: spaCy's `spacy find-threshold`
    (loading the pipeline again with each penalty, decoding = "posterior"
    in its config) finds the penalty and F1 that `find-threshold` finds from
    one scoring; the saved pipeline decodes by posterior with that penalty."""
    from spacy.cli.find_threshold import find_threshold

    posterior = tmp_path / "posterior"
    spacy.load(pipeline, config={"components": {"dgm_ner": {"decoding": "posterior"}}}).to_disk(posterior)
    arguments = (posterior, tiny_docbin, "dgm_ner", "posterior_penalty", "ents_f", "-n", 11)
    ours = run_ok(capsys, "find-threshold", *arguments)
    best, f, scores = find_threshold(
        posterior, tiny_docbin, "dgm_ner", "posterior_penalty", "ents_f", n_trials=11, silent=True
    )
    capsys.readouterr()
    assert len(set(scores.values())) > 1  # the penalty changes what is predicted
    assert best == pytest.approx(ours["tuned_posterior_penalty"]) and f == pytest.approx(ours["tuned_f"])
    assert ours["before_posterior_penalty"] == 0.5 and ours["before_f"] == pytest.approx(scores[0.5])
    # from a MAP pipeline: the same search, the MAP's F as before; saved with decoding = "posterior"
    from_map = run_ok(
        capsys,
        "find-threshold",
        pipeline,
        tiny_docbin,
        "dgm_ner",
        "posterior_penalty",
        "ents_f",
        "-n",
        11,
        "-o",
        tmp_path / "tuned",
    )
    assert from_map["tuned_posterior_penalty"] == ours["tuned_posterior_penalty"]
    loaded = spacy.load(tmp_path / "tuned").get_pipe("dgm_ner").settings
    assert (loaded["decoding"], loaded["posterior_penalty"]) == ("posterior", ours["tuned_posterior_penalty"])
    line = error_line(capsys, "find-threshold", pipeline, tiny_docbin, "dgm_ner", "temperature", "ents_f")
    assert "THRESHOLD_KEY 'temperature'" in line and "posterior_penalty" in line


def test_calibration_of_spacy_spancat_on_a_genia_file(capsys, tmp_path):
    from spacy.util import fix_random_seed

    from spacy_depner.readers.genia import genia_examples, read_genia

    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "spancat",
        config={
            "spans_key": "sc",
            "threshold": 0.3,
            "suggester": {"@misc": "spacy.ngram_suggester.v1", "sizes": [1, 2, 3]},
        },
    )
    examples = genia_examples(nlp.vocab, read_genia(DATA / "nested_genia.jsonl"), "sc")
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(30):
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(tmp_path / "spancat")
    printed = run_ok(
        capsys, "calibration-report", tmp_path / "spancat", DATA / "nested_genia.jsonl", "--output", tmp_path / "r.json"
    )
    entry = json.loads((tmp_path / "r.json").read_text())["components"]["spancat"]
    assert entry["span_group"] == "sc" and printed["spancat"]["per_file"][0]["gold"] == 14
    predicted = [nlp(eg.predicted.copy()).spans["sc"] for eg in examples]
    scores = np.concatenate([np.asarray(g.attrs["scores"]) for g in predicted if len(g)])
    assert entry["per_file"][0]["spans"] == len(scores) > 0 and (scores >= 0.3).all()
    assert entry["per_file"][0]["mean_confidence"] == pytest.approx(scores.mean(), rel=1e-5)


@needs_settings
@pytest.mark.parametrize("factory, data", [("chain_ner", "tiny.spacy"), ("hypergraph_ner", "nested_genia.jsonl")])
def test_calibrate_then_tune_threshold_of_other_components(capsys, factory, data, tiny_docbin, tmp_path):
    from tiny_corpus import train_component

    from spacy_depner.readers.genia import genia_examples, read_genia

    model = {
        "@architectures": "spacy_depner.TagScorer.v1" if factory == "chain_ner" else "spacy_depner.TokenScorer.v1",
        "tok2vec": SMALL_TOK2VEC,
    }
    if factory == "chain_ner":
        make = lambda nlp: [make_example(nlp, *row) for row in TINY]  # noqa: E731
    else:
        make = lambda nlp: genia_examples(nlp.vocab, read_genia(DATA / data), factory)  # noqa: E731
    nlp, *_ = train_component(factory, {"model": model}, make, 30)
    nlp.to_disk(tmp_path / "model")
    dev = tiny_docbin if data == "tiny.spacy" else DATA / data
    calibrated = run_ok(capsys, "calibrate", tmp_path / "model", dev, tmp_path / "model")  # saved over itself
    assert calibrated["component"] == factory and calibrated["before"]["spans"] > 0
    assert calibrated["after"]["nll"] <= calibrated["before"]["nll"] + 1e-6
    tuned = run_ok(capsys, "find-threshold", tmp_path / "model", dev, tmp_path / "model", "--step", 0.1)
    loaded = spacy.load(tmp_path / "model")
    assert loaded.get_pipe(factory).settings["temperature"] == calibrated["temperature"]
    assert loaded.get_pipe(factory).settings["threshold"] == tuned["tuned_threshold"]
    report = run_ok(capsys, "calibration-report", tmp_path / "model", dev, "--output", tmp_path / "r.json")
    assert report[factory]["per_file"][0]["f"] == pytest.approx(tuned["tuned_f"])


@needs_settings
def test_find_threshold_never_saves_a_pipeline_below_the_input(capsys, pipeline, tiny_docbin, tmp_path):
    """A MAP pipeline searched for a posterior penalty on a grid of two
    values (0 and 1): the report's before is MAP's own F, above the best
    penalty's; -o saves the input's decoding (a line on stderr says so),
    --force the tuned penalty."""
    arguments = ("find-threshold", pipeline, tiny_docbin, "dgm_ner", "posterior_penalty", "ents_f", "-n", 2)
    assert run(app, [str(a) for a in (*arguments, "-o", tmp_path / "kept")], PROG) == 0
    captured = capsys.readouterr()
    printed = json.loads(captured.out)
    _, correct, n_gold = collected(pipeline, tiny_docbin)  # MAP's spans, the pipeline's own decoding
    assert printed["before_f"] == pytest.approx(2 * correct.sum() / (len(correct) + n_gold))
    assert printed["before_decoding"] == "map" and printed["before_posterior_penalty"] is None
    assert printed["before_f"] > printed["tuned_f"] and printed["chosen"] == "before"
    assert "--force" in captured.err and "map" in captured.err
    assert spacy.load(tmp_path / "kept").get_pipe("dgm_ner").settings["decoding"] == "map"
    forced = run_ok(capsys, *arguments, "-o", tmp_path / "forced", "--force")
    assert forced["chosen"] == "tuned" and forced["tuned_f"] == printed["tuned_f"]
    settings = spacy.load(tmp_path / "forced").get_pipe("dgm_ner").settings
    assert (settings["decoding"], settings["posterior_penalty"]) == ("posterior", forced["tuned_posterior_penalty"])
