"""The tuning commands that save a pipeline (``find-threshold``,
``find-penalty``, ``calibrate``) never save one that scores lower on the
data than the input: given a search that cannot reach the input's own
setting, each keeps it (``chosen``: before, a line on stderr naming
--force), reports both F1 figures, and saves the value found only with
--force."""

import json
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin
from tiny_corpus import SMALL_TOK2VEC, TINY, make_example, train_component

from spacy_depner.cli.app import app
from spacy_depner.cli.errors import run
from spacy_depner.readers.genia import genia_examples, read_genia

PROG = "python -m spacy_depner"
GENIA = Path(__file__).parents[1] / "data" / "nested_genia.jsonl"


def run_both(capsys, *args):
    """Run the app on ``args``, check it succeeds: (the JSON it printed, its stderr)."""
    status = run(app, [str(a) for a in args], PROG)
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out), captured.err


@pytest.fixture(scope="module")
def thresholded(tmp_path_factory):
    """A dgm_ner over every span trained briefly (its span probabilities
    spread below 1) with a threshold between its two least probable spans,
    and dev data where the least probable is no entity: the input's
    threshold keeps exactly the gold entities (F1 1). (pipeline, dev, threshold)."""
    folder = tmp_path_factory.mktemp("thresholded")
    config = {
        "suggester": {"@misc": "spacy_depner.all_spans_suggester.v1", "max_length": 4},
        "model": {"@architectures": "spacy_depner.SpanScorer.v1", "tok2vec": SMALL_TOK2VEC},
    }
    nlp, _, examples, _ = train_component("dgm_ner", config, lambda nlp: [make_example(nlp, *row) for row in TINY], 5)
    docs = [nlp(eg.predicted.copy()) for eg in examples]
    spans = sorted(
        (
            (float(p), i, (s.start, s.end, s.label_))
            for i, doc in enumerate(docs)
            for s, p in zip(doc.spans["dgm_ner"], doc.spans["dgm_ner"].attrs["scores"])
        ),
    )
    gold = [{(e.start, e.end, e.label_) for e in eg.reference.ents} for eg in examples]
    assert [s in gold[i] for _, i, s in spans] == [True] * 8 == [True] * sum(map(len, gold))
    (lowest, doc_index, dropped), (second, _, _) = spans[:2]
    references = [eg.reference.copy() for eg in examples]
    references[doc_index].ents = [e for e in references[doc_index].ents if (e.start, e.end, e.label_) != dropped]
    DocBin(docs=references).to_disk(folder / "dev.spacy")
    threshold = round((lowest + second) / 2, 4)
    assert lowest < threshold < second
    nlp.to_disk(folder / "trained")
    spacy.load(folder / "trained", config={"components": {"dgm_ner": {"threshold": threshold}}}).to_disk(
        folder / "pipeline"
    )
    return folder / "pipeline", folder / "dev.spacy", threshold


def test_find_threshold_keeps_a_threshold_its_grid_misses(capsys, thresholded, tmp_path):
    """-n 2 tries 0 (every span: 7 correct of 8, F1 14/15) and 1 (none):
    the input's threshold, between them, scores F1 1 and is kept."""
    model, dev, threshold = thresholded
    arguments = ("find-threshold", model, dev, "dgm_ner", "threshold", "ents_f", "-n", 2)
    printed, err = run_both(capsys, *arguments, "-o", tmp_path / "kept")
    assert (printed["before_threshold"], printed["before_f"]) == (threshold, 1.0)
    assert (printed["tuned_threshold"], printed["tuned_f"]) == (0.0, pytest.approx(14 / 15))
    assert printed["chosen"] == "before" and f"threshold {threshold}" in err and "--force" in err
    assert spacy.load(tmp_path / "kept").get_pipe("dgm_ner").settings["threshold"] == threshold
    forced, _ = run_both(capsys, *arguments, "-o", tmp_path / "forced", "--force")
    assert forced["chosen"] == "tuned" and forced["tuned_f"] == printed["tuned_f"]
    assert spacy.load(tmp_path / "forced").get_pipe("dgm_ner").settings["threshold"] == 0.0


def test_calibrate_keeps_the_temperature_its_threshold_scores_higher_with(capsys, thresholded, tmp_path):
    """Temperatures from 5 to 20 flatten the span probabilities below the
    input's threshold: fewer spans kept, a lower F1 than the input's (at
    T = 1), which calibrate keeps unless --force."""
    model, dev, threshold = thresholded
    arguments = ("calibrate", model, dev)
    printed, err = run_both(capsys, *arguments, tmp_path / "kept", "--low", 5, "--high", 20)
    assert printed["before_temperature"] == 1.0 and 5.0 <= printed["temperature"] <= 20.0
    assert printed["before"]["f"] == 1.0 > printed["after"]["f"]
    assert printed["chosen"] == "before" and "temperature 1.0" in err and "--force" in err
    kept = spacy.load(tmp_path / "kept").get_pipe("dgm_ner").settings
    assert (kept["temperature"], kept["threshold"]) == (1.0, threshold)
    forced, _ = run_both(capsys, *arguments, tmp_path / "forced", "--low", 5, "--high", 20, "--force")
    assert forced["chosen"] == "tuned" and forced["temperature"] == printed["temperature"]
    assert spacy.load(tmp_path / "forced").get_pipe("dgm_ner").settings["temperature"] == forced["temperature"]


def test_find_penalty_keeps_a_penalty_its_range_misses(capsys, tmp_path):
    """A hypergraph_ner at its trained penalty (0) searched from -40 to -39,
    where it predicts no mention: the input's penalty, its F1 as spaCy
    scores the saved pipeline, is kept unless --force."""
    model = {"@architectures": "spacy_depner.TokenScorer.v1", "hidden_width": 32, "tok2vec": SMALL_TOK2VEC}
    make = lambda nlp: genia_examples(nlp.vocab, read_genia(GENIA), "hypergraph_ner")  # noqa: E731
    nlp, *_ = train_component("hypergraph_ner", {"model": model}, make, 30)
    nlp.to_disk(tmp_path / "model")
    arguments = ("find-penalty", tmp_path / "model", GENIA)
    printed, err = run_both(capsys, *arguments, tmp_path / "kept", "--low", -40, "--high", -39, "--step", 1)
    assert printed["before_penalty"] == 0.0 and printed["before_f"] > 0.0 == printed["tuned_f"]
    assert printed["chosen"] == "before" and "penalty 0.0" in err and "--force" in err
    kept = spacy.load(tmp_path / "kept")
    assert kept.get_pipe("hypergraph_ner").mention_penalty == 0.0
    scores = kept.evaluate(make(kept))
    assert scores["spans_hypergraph_ner_f"] == pytest.approx(printed["before_f"])
    arguments = (*arguments, tmp_path / "forced", "--low", -40, "--high", -39, "--step", 1, "--force")
    forced, _ = run_both(capsys, *arguments)
    assert forced["chosen"] == "tuned" and forced["tuned_penalty"] == -40.0
    assert spacy.load(tmp_path / "forced").get_pipe("hypergraph_ner").mention_penalty == -40.0
