"""bench-stages: each component timed on its own, its share of the sum."""

import time

import spacy
from spacy.language import Language
from spacy.tokens import Doc

from experiments.bench.stages import WHOLE, stage_rows, stage_seconds


@Language.component("test_bench_stages_slow")
def slow(doc):
    time.sleep(0.002)
    return doc


def test_the_slow_component_takes_its_share_and_the_whole_is_timed():
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("test_bench_stages_slow")
    docs = [Doc(nlp.vocab, words=["a", "b", "."]) for _ in range(20)]
    seconds = stage_seconds(nlp, docs, repeats=2, batch_size=8)
    assert set(seconds) == {"sentencizer", "test_bench_stages_slow", WHOLE}
    assert seconds["test_bench_stages_slow"] >= 20 * 0.002 > seconds["sentencizer"]
    assert seconds[WHOLE] >= 20 * 0.002
    rows = stage_rows(seconds, nlp.pipe_names, words=60)
    assert [row[0] for row in rows] == ["sentencizer", "test_bench_stages_slow", WHOLE + " (nlp.pipe)"]
    shares = [float(row[2].rstrip("%")) for row in rows[:2]]
    assert abs(sum(shares) - 100) < 0.2 and shares[1] > 50
