"""The lattices as spaCy suggesters: each against its definition on random
trees, the Ragged contract, the clear parse error, entry points, and spaCy's
own spancat trained with the DGM suggester."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import registry
from thinc.api import NumpyOps
from tiny_corpus import SMALL_TOK2VEC, TINY, train_component

DATA = Path(__file__).parent.parent / "data"
NAMES = ["spacy_depner.dgm_suggester.v1", "spacy_depner.dgm_s_suggester.v1", "spacy_depner.all_spans_suggester.v1"]


def random_tree(n, rng):
    """Heads (relative to the sentence, a root is its own head) of a random,
    possibly non-projective tree: each token in a random order hangs from an
    earlier one."""
    order = rng.permutation(n)
    heads = np.empty(n, dtype=np.int64)
    heads[order[0]] = order[0]
    for k in range(1, n):
        heads[order[k]] = order[rng.integers(k)]
    return heads.tolist()


def path(heads, u, v):
    """The tree path from u to v (a list of positions), by parent links."""

    def to_root(t):
        chain = [t]
        while heads[chain[-1]] != chain[-1]:
            chain.append(heads[chain[-1]])
        return chain

    up, down = to_root(u), to_root(v)
    common = next(t for t in up if t in down)
    return up[: up.index(common) + 1] + down[: down.index(common)][::-1]


def defined_spans(name, sentences, max_length):
    """The set of [start, end) of a Doc made of ``sentences`` (heads per
    sentence), by the definitions of Jie, Muis & Lu (2017)."""
    spans, offset = set(), 0
    for heads in sentences:
        n = len(heads)
        for u in range(n):
            for v in range(u, n):
                if max_length is not None and v - u + 1 > max_length:
                    continue
                p = path(heads, u, v)
                if name.endswith("all_spans_suggester.v1") or u == v:
                    keep = True
                elif name.endswith("dgm_s_suggester.v1"):
                    keep = heads[u] == v or heads[v] == u
                else:
                    keep = all(a < b for a, b in zip(p, p[1:]))
                if keep:
                    spans.add((offset + u, offset + v + 1))
        offset += n
    return spans


def doc_of(vocab, sentences):
    words, heads, starts = [], [], []
    for sentence in sentences:
        offset = len(words)
        words += [f"w{offset + i}" for i in range(len(sentence))]
        heads += [offset + h for h in sentence]
        starts += [True] + [False] * (len(sentence) - 1)
    return Doc(vocab, words=words, heads=heads, deps=["dep"] * len(words), sent_starts=starts)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("max_length", [None, 1, 3])
def test_suggesters_match_their_definitions_on_random_trees(name, max_length):
    rng = np.random.default_rng(len(name) + (max_length or 0))
    vocab = spacy.blank("en").vocab
    suggester = registry.misc.get(name)(max_length=max_length)
    for trial in range(30):
        docs = [
            doc_of(vocab, [random_tree(int(rng.integers(1, 9)), rng) for _ in range(int(rng.integers(1, 4)))])
            for _ in range(int(rng.integers(1, 4)))
        ]
        docs.insert(int(rng.integers(0, len(docs) + 1)), Doc(vocab, words=[]))
        out = suggester(docs, ops=NumpyOps())
        assert out.dataXd.shape[1] == 2 and out.lengths.shape == (len(docs),)
        start = 0
        for doc, length in zip(docs, out.lengths.tolist()):
            found = [tuple(row) for row in out.dataXd[start : start + length].tolist()]
            start += length
            sentences = [[t.head.i - sent.start for t in sent] for sent in doc.sents] if len(doc) else []
            assert len(found) == len(set(found))
            assert set(found) == defined_spans(name, sentences, max_length)
        assert start == out.dataXd.shape[0]


def test_ragged_contract_default_ops_and_empty_batch():
    vocab = spacy.blank("en").vocab
    doc = Doc(vocab, words="Mary lives in Paris".split(), heads=[1, 1, 3, 1], deps=["nsubj", "ROOT", "case", "obl"])
    out = registry.misc.get(NAMES[0])()([doc])  # no ops: the current ops
    # hand-derived: singles, and Mary-lives, in-Paris, lives..Paris, Mary..Paris (path 0 -> 1 -> 3)
    assert sorted(map(tuple, out.dataXd.tolist())) == sorted(
        [(0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (2, 4), (1, 4), (0, 4)]
    )
    assert out.dataXd.dtype == np.int32 and out.lengths.tolist() == [8]
    empty = registry.misc.get(NAMES[0])()([])
    assert empty.dataXd.shape[0] == 0 and empty.lengths.shape == (0,)


@pytest.mark.parametrize("name", NAMES[:2])
def test_tree_suggesters_need_a_parse(name):
    vocab = spacy.blank("en").vocab
    with pytest.raises(ValueError, match="no dependency parse"):
        registry.misc.get(name)()([Doc(vocab, words="Mary lives here".split())])
    out = registry.misc.get(NAMES[2])(max_length=2)([Doc(vocab, words="Mary lives here".split())])
    assert sorted(map(tuple, out.dataXd.tolist())) == [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]


@pytest.mark.parametrize("name", NAMES)
def test_bad_max_length(name):
    with pytest.raises(ValueError, match="max_length"):
        registry.misc.get(name)(max_length=0)


@pytest.mark.parametrize("name", [NAMES[0], NAMES[2]])
@pytest.mark.parametrize("value", [0, -3, 2.5, True, "10"])
def test_bad_max_sentence_length(name, value):
    with pytest.raises(ValueError, match="max_sentence_length .* positive integer or null"):
        registry.misc.get(name)(max_sentence_length=value)


def chain_doc(vocab, n):
    """One right-branching sentence: token i hangs from i - 1 (all n (n + 1) / 2 spans are DGM valid)."""
    return Doc(vocab, words=["w"] * n, heads=[0] + list(range(n - 1)), deps=["ROOT"] + ["dep"] * (n - 1))


def no_spans_made(monkeypatch):
    """Make every span function of the suggesters fail: a check must come first."""
    from spacy_depner.pipeline import suggesters

    def fail(*args, **kwargs):
        raise AssertionError("spans were made")

    for function in ("valid_spans", "single_arc_spans", "all_spans"):
        monkeypatch.setattr(suggesters, function, fail)


@pytest.mark.parametrize("name", [NAMES[0], NAMES[2]])
def test_max_sentence_length_refuses_an_unbounded_lattice_before_making_spans(name, monkeypatch):
    vocab = spacy.blank("en").vocab
    docs = [chain_doc(vocab, 3), chain_doc(vocab, 11)]
    ok = registry.misc.get(name)(max_sentence_length=11)(docs)
    assert ok.lengths.tolist() == [6, 66]
    bounded = registry.misc.get(name)(max_length=10, max_sentence_length=10)(docs)  # at most 10 spans per token
    assert bounded.lengths.tolist() == [6, 66 - 1]
    no_spans_made(monkeypatch)
    for max_length in (None, 11):
        with pytest.raises(
            ValueError, match=r"11 tokens \(Doc 1 of the batch, tokens 0-11\).*max_sentence_length = 10"
        ):
            registry.misc.get(name)(max_length=max_length, max_sentence_length=10)(docs)


def test_spans_per_token_of_each_suggester():
    from spacy_depner.pipeline.suggesters import spans_per_token

    assert [spans_per_token(registry.misc.get(n)()) for n in NAMES] == [None, 2, None]
    assert [spans_per_token(registry.misc.get(n)(max_length=8)) for n in NAMES] == [8, 2, 8]
    assert spans_per_token(registry.misc.get("spacy.ngram_suggester.v1")(sizes=[1, 2, 3])) == 3
    assert spans_per_token(registry.misc.get("spacy.preset_spans_suggester.v1")(spans_key="sc")) is None


def test_a_doc_with_more_possible_spans_than_a_ragged_holds_is_refused():
    from spacy_depner.pipeline.suggesters import check_ragged_capacity

    # 65,535 * 65,536 / 2 = 2,147,450,880 spans fit in int32 lengths; 65,536 * 65,537 / 2 do not
    check_ragged_capacity(np.array([0, 65_535]), np.array([0, 65_535]), None, "x")
    with pytest.raises(ValueError, match="Doc 1 of the batch .*2,147,516,416 candidate spans"):
        check_ragged_capacity(np.array([0, 5, 65_541]), np.array([0, 5, 65_541]), None, "x")
    check_ragged_capacity(np.array([0, 10**8]), np.array([0, 10**8]), 8, "x")  # 8e8 spans
    with pytest.raises(ValueError, match="Bound the spans"):
        check_ragged_capacity(np.array([0, 3 * 10**8]), np.array([0, 3 * 10**8]), 8, "x")


def test_spancat_with_an_unbounded_dgm_suggester_refuses_a_huge_sentence(monkeypatch):
    nlp = spancat_pipeline()
    nlp.initialize(lambda: [spancat_example(nlp, *row) for row in TINY])
    no_spans_made(monkeypatch)
    with pytest.raises(ValueError, match="70,000 tokens.*more than a suggester's Ragged holds"):
        nlp(chain_doc(nlp.vocab, 70_000))  # max_sentence_length = null: only the Ragged bounds it
    bounded = spacy.blank("en")
    bounded.add_pipe("spancat", config={**SPANCAT, "suggester": {**SPANCAT["suggester"], "max_sentence_length": 1000}})
    bounded.initialize(lambda: [spancat_example(bounded, *row) for row in TINY])
    with pytest.raises(ValueError, match="1,500 tokens.*max_sentence_length = 1000.*spancat.suggester"):
        bounded(chain_doc(bounded.vocab, 1500))


@pytest.mark.slow
def test_resolved_through_entry_points_without_import():
    code = (
        "import spacy; from spacy.util import registry; import sys; "
        f"fs = [registry.misc.get(n) for n in {NAMES!r}]; "
        "print(all(callable(f) for f in fs), 'spacy_depner' in sys.modules and "
        "'spacy_depner.pipeline.suggesters' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.split() == ["True", "True"]  # loaded by the entry point, not by an import in the code


def gold_trees(conllu: Path):
    """Per sentence, (words, heads) read straight from a CoNLL-U file (heads
    relative to the sentence, a root is its own head)."""
    sentences, rows = [], []
    for line in list(conllu.read_text(encoding="utf8").splitlines()) + [""]:
        if not line.strip():
            if rows:
                sentences.append(([w for w, _ in rows], [h - 1 if h else i for i, (_, h) in enumerate(rows)]))
            rows = []
        elif not line.startswith("#"):
            cols = line.split("\t")
            if cols[0].isdigit():
                rows.append((cols[1], int(cols[6])))
    return sentences


SPANCAT = {
    "suggester": {"@misc": "spacy_depner.dgm_suggester.v1", "max_length": None},
    "spans_key": "sc",
    "model": {
        "@architectures": "spacy.SpanCategorizer.v1",
        "reducer": {"@layers": "spacy.mean_max_reducer.v1", "hidden_size": 64},
        "scorer": {"@layers": "spacy.LinearLogistic.v1"},
        "tok2vec": SMALL_TOK2VEC,
    },
}


def spancat_pipeline():
    nlp = spacy.blank("en")
    nlp.add_pipe("spancat", config=SPANCAT)
    return nlp


def spancat_example(nlp, words, heads, deps, tags):
    reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps, ents=tags)
    reference.spans["sc"] = [Span(reference, e.start, e.end, e.label_) for e in reference.ents]
    return Example(Doc(nlp.vocab, words=words, heads=heads, deps=deps), reference)


@pytest.mark.slow
def test_spacy_spancat_learns_with_the_dgm_suggester():
    nlp, _, examples, history = train_component(
        "spancat", SPANCAT, lambda nlp: [spancat_example(nlp, *row) for row in TINY], 60
    )
    history = [step["spancat"] for step in history]
    assert history[-1] < 0.1 * history[0]
    assert nlp.evaluate(examples)["spans_sc_f"] == 1.0  # every TINY entity is a DGM valid span


def test_spancat_candidates_are_the_dgm_valid_spans_of_the_gold_trees():
    from spacy_depner.readers.uner import create_uner_reader
    from spacy_depner.structures.trees.candidate_spans import valid_spans

    nlp = spancat_pipeline()
    examples = list(create_uner_reader(DATA / "tiny.conllu", DATA / "tiny.iob2", "given")(nlp))
    trees = gold_trees(DATA / "tiny.conllu")
    assert len(examples) == len(trees) > 0
    candidates = nlp.get_pipe("spancat").suggester([eg.predicted for eg in examples], ops=NumpyOps())
    start = 0
    for eg, (words, heads), length in zip(examples, trees, candidates.lengths.tolist()):
        assert [t.text for t in eg.predicted] == words
        absolute = np.array([-1 if h == i else h for i, h in enumerate(heads)])
        expected = {(u, v + 1) for u, v in valid_spans(absolute, np.array([0, len(words)])).tolist()}
        found = {tuple(row) for row in candidates.dataXd[start : start + length].tolist()}
        start += length
        assert found == expected


SPANCAT_CODE = """
from spacy.tokens import Span
from spacy.util import registry
from spacy_depner.readers.uner import create_uner_reader


@registry.readers("test.uner_as_spans.v1")
def uner_as_spans(conllu: str, iob2: str):
    read = create_uner_reader(conllu, iob2, "given")

    def examples(nlp):
        for eg in read(nlp):
            eg.reference.spans["sc"] = [Span(eg.reference, e.start, e.end, e.label_) for e in eg.reference.ents]
            yield eg

    return examples
"""

SPANCAT_CONFIG = """
[paths]
conllu = null
iob2 = null

[nlp]
lang = "en"
pipeline = ["spancat"]

[components]

[components.spancat]
factory = "spancat"
spans_key = "sc"

[components.spancat.suggester]
@misc = "spacy_depner.dgm_suggester.v1"
max_length = null

[components.spancat.model]
@architectures = "spacy.SpanCategorizer.v1"

[components.spancat.model.reducer]
@layers = "spacy.mean_max_reducer.v1"
hidden_size = 32

[components.spancat.model.scorer]
@layers = "spacy.LinearLogistic.v1"

[components.spancat.model.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 32
depth = 2
embed_size = 500
window_size = 1
maxout_pieces = 2
subword_features = true

[corpora]

[corpora.train]
@readers = "test.uner_as_spans.v1"
conllu = ${paths.conllu}
iob2 = ${paths.iob2}

[corpora.dev]
@readers = "test.uner_as_spans.v1"
conllu = ${paths.conllu}
iob2 = ${paths.iob2}

[training]
seed = 0
max_steps = 30
eval_frequency = 10

[training.batcher]
@batchers = "spacy.batch_by_words.v1"
size = 1000

[training.score_weights]
spans_sc_f = 1.0
"""


@pytest.mark.slow
def test_spacy_train_with_the_dgm_suggester_in_a_config(tmp_path):
    (tmp_path / "code.py").write_text(SPANCAT_CODE)
    (tmp_path / "base.cfg").write_text(SPANCAT_CONFIG)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy",
            "init",
            "fill-config",
            str(tmp_path / "base.cfg"),
            str(tmp_path / "config.cfg"),
            "--code",
            str(tmp_path / "code.py"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy",
            "train",
            str(tmp_path / "config.cfg"),
            "--output",
            str(tmp_path / "out"),
            "--code",
            str(tmp_path / "code.py"),
            "--paths.conllu",
            str(DATA / "tiny.conllu"),
            "--paths.iob2",
            str(DATA / "tiny.iob2"),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.config["components"]["spancat"]["suggester"]["@misc"] == "spacy_depner.dgm_suggester.v1"
    doc = Doc(nlp.vocab, words="Mary lives in Paris".split(), heads=[1, 1, 3, 1], deps=["nsubj", "ROOT", "case", "obl"])
    suggested = nlp.get_pipe("spancat").suggester([doc], ops=NumpyOps())
    assert sorted(map(tuple, suggested.dataXd.tolist())) == sorted(
        [(0, 1), (1, 2), (2, 3), (3, 4), (0, 2), (2, 4), (1, 4), (0, 4)]
    )
    assert "sc" in nlp(doc).spans
