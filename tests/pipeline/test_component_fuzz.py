"""Every entity component on random Docs: the right output or a documented error.

Each component is built and initialized once per module with a tiny model;
hypothesis (derandomized, so the same cases every run) then makes batches of
random Docs: tokens of ASCII, whitespace only, emoji, Arabic and Hebrew,
any unicode, empty Docs; parses that are missing, random trees, forests
(several roots, crossing arcs), trees with a cycle added, or arbitrary heads
(cycles, self-loops, roots whose subtrees interleave); entities an earlier
component wrote; references with random entities (flat for ``doc.ents``,
overlapping for span groups). Each batch goes through predict +
set_annotations, or ``nlp.update``: CASES (2,000; the environment variable
FUZZ_CASES changes it) batches per target, half each.

What must happen is decided apart from the components, from the Docs alone:
a component that reads trees raises ``needs dependency trees`` for a
non-empty Doc without a parse and ``the parse is not a forest`` when the
brute-force check of ``brute_forest`` finds a fault in a Doc's heads (within
spaCy's sentences); ``nested_ner`` and ``hypergraph_ner`` refuse a gold
mention across a sentence end; anything else must succeed with entities
inside their Docs, labels among the component's, scores finite in [0, 1],
``doc.ents`` untouched by the span-group components, finite losses and
parameters.
"""

import os
import time
from typing import Callable, Dict, List, NamedTuple, Optional

import numpy as np
import pytest
import spacy
from budgets import cases
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, Span
from spacy.training import Example
from spacy.util import fix_random_seed
from structures.brute_forest import brute_first_fault
from tiny_corpus import TINY

from spacy_depner.pipeline.entity_pipe import ENTITY_COMPONENTS

CASES = int(os.environ.get("FUZZ_CASES", cases("component_fuzz")))
LABELS = ("PER", "LOC")
TINY_TOK2VEC = {
    "@architectures": "spacy.HashEmbedCNN.v2",
    "pretrained_vectors": None,
    "width": 8,
    "depth": 1,
    "embed_size": 50,
    "window_size": 1,
    "maxout_pieces": 2,
    "subword_features": True,
}


def scorer(architecture: str, dependency_features: bool = False) -> dict:
    return {
        "@architectures": architecture,
        "hidden_width": 8,
        "dependency_features": dependency_features,
        "dependency_width": 4,
        "tok2vec": TINY_TOK2VEC,
    }


class Target(NamedTuple):
    factory: str
    config: dict
    reads_trees: bool
    spans_key: Optional[str]  # the span group of the output and of the gold mentions; None: doc.ents
    sentence_bound_gold: bool  # a gold mention across a sentence end is a ValueError


TARGETS = {
    "dgm_ner": Target("dgm_ner", {"model": scorer("spacy_depner.SpanScorer.v1")}, True, None, False),
    "dgm_ner_dependency_features": Target(
        "dgm_ner",
        {
            "model": scorer("spacy_depner.SpanScorer.v1", True),
            "suggester": {"@misc": "spacy_depner.all_spans_suggester.v1", "max_length": 4},
        },
        True,
        None,
        False,
    ),
    "chain_ner": Target("chain_ner", {"model": scorer("spacy_depner.TagScorer.v1")}, False, None, False),
    "nested_ner": Target("nested_ner", {"model": scorer("spacy_depner.MentionScorer.v1")}, False, "nested_ner", True),
    "nested_ner_dgm": Target(
        "nested_ner",
        {
            "model": scorer("spacy_depner.MentionScorer.v1"),
            "suggester": {"@misc": "spacy_depner.dgm_suggester.v1", "max_length": None},
        },
        True,
        "nested_ner",
        True,
    ),
    "hypergraph_ner": Target(
        "hypergraph_ner", {"model": scorer("spacy_depner.TokenScorer.v1")}, False, "hypergraph_ner", True
    ),
}


def test_every_entity_component_has_a_target():
    """A new entity component (an EntityPipe subclass with a factory) is
    fuzzed once it has a row in TARGETS."""
    assert {target.factory for target in TARGETS.values()} == set(ENTITY_COMPONENTS)


# ---------------------------------------------------------------- random Docs
#
# Hypothesis draws a few values per Doc (its length, kind of parse, a seed
# and up to two words of any unicode); a numpy generator seeded by the draw
# builds the rest, so a case costs a handful of draws, not one per token.

WORD_POOL = (
    ["Paris", "Mary", "New", "York", "the", "of", ".", ",", "3.5", "U.S.", "-", "'s"]
    + [" ", "  ", "\n", "\t", "\r\n", "\u00a0", "\u3000"]  # whitespace only
    + ["😀", "👩‍👩‍👧", "🇫🇷", "👍🏽", "❤️"]  # emoji: ZWJ sequences, flags, modifiers
    + ["مرحبا", "القاهرة", "محمد", "שלום", "ירושלים", "\u200fשלום\u200f", "١٢٣"]  # right to left
)
DEP_POOL = ["nsubj", "obj", "det", "compound", "dep", "punct", "😀", "نعت"]

#: Parse kinds, valid trees first (hypothesis shrinks towards the first);
#: half the batches have trees only, so that the components that read trees
#: also run on many valid batches.
PARSES = ["tree", "forest", "partial", "cycle", "arbitrary", "none", "sentences"]


def random_forest_heads(rng: np.random.Generator, n: int, roots: bool) -> List[int]:
    """Heads (absolute, a root is its own head) of a random tree, in general
    non-projective: tokens in a random order each hang from an earlier one;
    with ``roots``, about one in ten is a root too (a forest: spaCy splits it
    into sentences, and two roots whose subtrees interleave put a head outside
    its sentence)."""
    order = rng.permutation(n)
    heads = [0] * n
    for k, token in enumerate(order):
        root = k == 0 or (roots and rng.random() < 0.1)
        heads[token] = int(token if root else order[rng.integers(k)])
    return heads


def random_parse(rng: np.random.Generator, n: int, kind: str):
    """(heads or None, deps or None, sent_starts or None) of n tokens: a tree,
    a forest, a forest with some heads missing (None), a tree with a cycle
    (an ancestor of a token gets the token as its head), arbitrary heads
    (cycles, self-loops, interleaved roots), no parse, or sentence starts only."""
    if kind == "none" or n == 0:
        return None, None, None
    if kind == "sentences":
        return None, None, [True] + (rng.random(n - 1) < 0.3).tolist()
    if kind == "arbitrary":
        heads = rng.integers(0, n, n).tolist()
    else:
        heads = random_forest_heads(rng, n, roots=kind in ("forest", "partial"))
        if kind == "cycle":
            token = int(rng.integers(n))
            above, v = [], token
            while heads[v] != v:
                v = heads[v]
                above.append(v)
            if above:
                heads[above[int(rng.integers(len(above)))]] = token
    deps = ["ROOT" if h == i else DEP_POOL[rng.integers(len(DEP_POOL))] for i, h in enumerate(heads)]
    if kind == "partial":
        missing = rng.random(n) < 0.1
        heads = [None if gone else h for h, gone in zip(heads, missing)]
        deps = [None if gone else d for d, gone in zip(deps, missing)]
    return heads, deps, None


def random_gold(rng: np.random.Generator, n: int, flat: bool) -> List[tuple]:
    """[(start, end, label)]: up to 3 random mentions of at most 4 tokens
    (non-overlapping if ``flat``)."""
    spans = []
    for _ in range(int(rng.integers(4)) if n else 0):
        start = int(rng.integers(n))
        end = int(rng.integers(start + 1, min(n, start + 4) + 1))
        if not flat or all(end <= s or e <= start for s, e, _ in spans):
            spans.append((start, end, LABELS[rng.integers(len(LABELS))]))
    return spans


class Case(NamedTuple):
    kind: str
    words: List[str]
    spaces: List[bool]
    parse: tuple  # (heads, deps, sent_starts)
    gold: List[tuple]
    earlier: List[tuple]  # entities an earlier component wrote to the input Doc


@st.composite
def doc_case(draw, flat: bool, kinds: List[str]) -> Case:
    n = draw(st.one_of(st.integers(0, 9), st.integers(10, 40)))
    kind = draw(st.sampled_from(kinds))
    odd_words = draw(st.lists(st.text(min_size=1, max_size=5), max_size=2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pool = WORD_POOL + odd_words
    words = [pool[i] for i in rng.integers(0, len(pool), n)]
    spaces = (rng.random(n) < 0.7).tolist()
    earlier = [(s, e, "ORG") for s, e, _ in random_gold(rng, n, True)] if rng.random() < 0.3 else []
    return Case(kind, words, spaces, random_parse(rng, n, kind), random_gold(rng, n, flat), earlier)


def batches(flat: bool):
    """1-3 Docs, all with trees or each with any kind of parse."""
    kinds = st.sampled_from([PARSES[:1], PARSES])
    return kinds.flatmap(lambda chosen: st.lists(doc_case(flat, chosen), min_size=1, max_size=3))


def make_doc(vocab, case: Case) -> Doc:
    heads, deps, sent_starts = case.parse
    doc = Doc(vocab, words=case.words, spaces=case.spaces, heads=heads, deps=deps, sent_starts=sent_starts)
    doc.set_ents([Span(doc, s, e, label=label) for s, e, label in case.earlier])
    return doc


def make_example(vocab, case: Case, spans_key: Optional[str]) -> Example:
    reference = Doc(vocab, words=case.words, spaces=case.spaces)
    mentions = [Span(reference, s, e, label=label) for s, e, label in case.gold]
    if spans_key is None:
        reference.set_ents(mentions)
    else:
        reference.spans[spans_key] = mentions
    return Example(make_doc(vocab, case), reference)


# ---------------------------------------------------------------- what must happen


def sentence_offsets(doc: Doc) -> List[int]:
    starts = [t.i for t in doc if t.i == 0 or t.is_sent_start]
    return starts + [len(doc)]


def expected_error(target: Target, docs: List[Doc], cases: Optional[List[Case]] = None) -> Optional[str]:
    """The documented error the batch must raise (a regex), or None."""
    if target.reads_trees:
        for doc in docs:
            if len(doc) and not doc.has_annotation("DEP"):
                return "needs dependency trees"
        for doc in docs:
            if brute_first_fault([t.head.i for t in doc], sentence_offsets(doc))[0] >= 0:
                return "the parse is not a forest"
    if cases is not None and target.sentence_bound_gold:
        for doc, case in zip(docs, cases):
            offsets = sentence_offsets(doc)
            sentence_of = np.searchsorted(offsets, np.arange(len(doc)), side="right")
            if any(sentence_of[s] != sentence_of[e - 1] for s, e, _ in case.gold):
                return "a gold mention crosses a sentence boundary"
    return None


def check_output(target: Target, docs: List[Doc], cases: List[Case]) -> None:
    for doc, case in zip(docs, cases):
        found = list(doc.ents) if target.spans_key is None else list(doc.spans[target.spans_key])
        earlier = sorted(case.earlier)
        for span in found:
            assert 0 <= span.start < span.end <= len(doc), (span.start, span.end)
            if target.spans_key is None and (span.start, span.end, span.label_) in earlier:
                continue  # an earlier component's entity, kept
            assert span.label_ in LABELS, span.label_
            assert not any(token.is_space for token in span), span.text
        if target.spans_key is not None:  # ents = null: doc.ents as an earlier component left them
            assert [(e.start, e.end, e.label_) for e in doc.ents] == earlier
        else:  # a flat component keeps the entities an earlier component set (overwrite_ents = false)
            assert set(earlier) <= {(e.start, e.end, e.label_) for e in doc.ents}
        if target.spans_key is not None or target.factory == "dgm_ner":
            group = doc.spans[target.spans_key or "dgm_ner"]
            scores = np.asarray(group.attrs["scores"], dtype=np.float64)
            assert scores.shape == (len(group),)
            assert np.all(np.isfinite(scores)) and np.all((scores >= 0) & (scores <= 1 + 1e-6)), scores
        if target.factory == "nested_ner":  # each sentence is decoded on its own
            sentence_of = np.searchsorted(sentence_offsets(doc), np.arange(len(doc)), side="right")
            assert all(sentence_of[s.start] == sentence_of[s.end - 1] for s in found)


# ---------------------------------------------------------------- the runs


class Built(NamedTuple):
    nlp: spacy.Language
    component: object
    optimizer: object
    counts: Dict[str, int]
    slowest: List[float]


def build(target: Target) -> Built:
    """A blank pipeline with the target component, initialized on the tiny corpus."""
    fix_random_seed(0)
    nlp = spacy.blank("en")
    component = nlp.add_pipe(target.factory, config=target.config)
    sample = []
    for words, heads, deps, tags in TINY:
        reference = Doc(nlp.vocab, words=words, heads=heads, deps=deps, ents=[t.replace("MISC", "LOC") for t in tags])
        if target.spans_key is not None:
            reference.spans[target.spans_key] = list(reference.ents)
        sample.append(Example(Doc(nlp.vocab, words=words, heads=heads, deps=deps), reference))
    optimizer = nlp.initialize(lambda: sample)
    assert component.labels == LABELS
    return Built(nlp, component, optimizer, {}, [0.0])


@pytest.fixture(scope="module", params=list(TARGETS))
def built(request):
    """The target and its built pipeline; afterwards, the outcomes counted
    per step (printed with ``-s``) must include successes and, for a
    component that reads trees, both errors."""
    target = TARGETS[request.param]
    result = build(target)
    yield target, result
    print(f"\n{request.param}: {result.counts}, slowest case {result.slowest[0]:.3f} s")
    for step in {key.split()[0] for key in result.counts}:
        outcomes = {key.split(" ", 1)[1] for key in result.counts if key.startswith(step)}
        assert "ok" in outcomes, (step, result.counts)
        if target.reads_trees and sum(result.counts.values()) >= 100:
            assert {"trees", "forest"} <= outcomes, (step, result.counts)


def run_case(target: Target, built: Built, step: str, expected: Optional[str], action: Callable) -> None:
    started = time.perf_counter()
    if expected is None:
        action()
        outcome = "ok"
    else:
        with pytest.raises(ValueError, match=expected):
            action()
        outcome = expected.split()[-1]
    built.slowest[0] = max(built.slowest[0], time.perf_counter() - started)
    key = f"{step} {outcome}"
    built.counts[key] = built.counts.get(key, 0) + 1


@settings(max_examples=CASES // 2, derandomize=True, deadline=None, database=None)
@given(data=st.data())
def test_predict_and_set_annotations(built, data):
    target, b = built
    cases = data.draw(batches(flat=target.spans_key is None))
    docs = [make_doc(b.nlp.vocab, case) for case in cases]

    def predict():
        b.component.set_annotations(docs, b.component.predict(docs))
        check_output(target, docs, cases)

    run_case(target, b, "predict", expected_error(target, docs), predict)


@settings(max_examples=CASES // 2, derandomize=True, deadline=None, database=None)
@given(data=st.data())
def test_update(built, data):
    target, b = built
    cases = data.draw(batches(flat=target.spans_key is None))
    examples = [make_example(b.nlp.vocab, case, target.spans_key) for case in cases]
    docs = [eg.predicted for eg in examples]
    expected = expected_error(target, docs, cases) if any(len(doc) for doc in docs) else None

    def update():
        losses = b.nlp.update(examples, sgd=b.optimizer, losses={})
        assert all(np.isfinite(value) for value in losses.values()), losses
        for node in b.component.model.walk():
            for name in node.param_names:
                assert not node.has_param(name) or np.all(np.isfinite(node.get_param(name))), (node.name, name)

    run_case(target, b, "update", expected, update)
