"""Trees are checked once, where Docs become arrays.

spaCy keeps whatever heads it is given: ``Doc(words, heads=[1, 2, 0])``,
``doc.from_array`` (and so ``DocBin``), ``Doc.from_docs`` and the
``token.head`` setter all hold a cycle, and roots whose subtrees interleave
give heads outside the sentences spaCy derives. ``tree_arrays`` (the DGM
suggesters) and ``batch_heads_and_labels`` (the dependency features) refuse
such a Doc with one message naming the Doc, sentence, token, head, fault and
fix; valid forests (several roots, crossing arcs) and Docs without a parse
pass unchanged.
"""

import numpy as np
import pytest
import spacy
from spacy.attrs import DEP, HEAD
from spacy.tokens import Doc, DocBin
from structures.brute_forest import CYCLE, brute_first_fault
from thinc.api import NumpyOps

from spacy_depner.doc_arrays import trees as doc_trees
from spacy_depner.doc_arrays.trees import batch_heads_and_labels, tree_arrays
from spacy_depner.pipeline.suggesters import build_dgm_s_suggester, build_dgm_suggester

NLP = spacy.blank("en")
VOCAB = NLP.vocab
WORDS = "Lee met Ann in Paris".split()


def parsed(heads, words=None):
    words = words or WORDS[: len(heads)]
    return Doc(VOCAB, words=words, heads=heads, deps=["ROOT" if h == i else "dep" for i, h in enumerate(heads)])


def cycle_by_constructor():
    return parsed([1, 2, 0, 0, 0])


def cycle_by_head_setter():
    doc = parsed([1, 1, 1, 1, 1])
    doc[1].head = doc[2]  # 1 -> 2 -> 1
    return doc


def cycle_by_from_array():
    doc = parsed([1, 1, 1, 1, 1])
    array = doc.to_array([HEAD, DEP])
    array[1, 0] = np.uint64(1)  # relative head +1: token 1 hangs from token 2, which hangs from 1
    doc.from_array([HEAD, DEP], array)
    return doc


def cycle_by_docbin():
    return next(DocBin(docs=[cycle_by_constructor()]).get_docs(VOCAB))


def cycle_by_from_docs():
    return Doc.from_docs([parsed([0, 0]), parsed([1, 2, 0], WORDS[2:])])


WAYS = [cycle_by_constructor, cycle_by_head_setter, cycle_by_from_array, cycle_by_docbin, cycle_by_from_docs]


@pytest.mark.parametrize("make", WAYS, ids=lambda f: f.__name__)
def test_spacy_keeps_a_cycle_and_tree_arrays_refuses_it(make):
    doc = make()
    assert doc.has_annotation("DEP")
    heads = [t.head.i for t in doc]
    assert brute_first_fault(heads, [0, len(doc)])[1] == CYCLE, heads  # spaCy really holds the cycle
    with pytest.raises(ValueError, match=r"the parse is not a forest.*lies on the cycle of heads"):
        tree_arrays([doc])
    with pytest.raises(ValueError, match=r"'my_ner': the parse is not a forest"):
        batch_heads_and_labels([doc], "my_ner")


def test_the_message_names_doc_sentence_token_head_and_fix():
    good = parsed([1, 1, 1])
    # token 0 and token 1 are roots (two sentences: [0] and [1..4]); 2 -> 3 -> 4 -> 2 is a cycle
    bad = Doc(VOCAB, words="Paris is nice . He".split(), heads=[0, 1, 3, 4, 2], deps=["ROOT", "ROOT", "a", "b", "c"])
    assert [s.start for s in bad.sents] == [0, 1]
    with pytest.raises(ValueError) as error:
        tree_arrays([good, bad], "dgm_ner")
    message = str(error.value)
    for part in (
        "'dgm_ner': the parse is not a forest",
        "Doc 1 of the batch ('Paris is nice . He')",
        "sentence 1 (tokens 1-4)",
        "token 2 'nice' has head token 3 '.'",
        "cycle of heads 2 -> 3 -> 4 -> 2",
        "Make one token of the cycle a root",
        "doc[2].head",
        "leave the Doc out",
    ):
        assert part in message, (part, message)


def test_long_cycles_are_cut_in_the_message():
    n = 40
    doc = parsed([(i + 1) % n for i in range(n)], words=[f"w{i}" for i in range(n)])
    with pytest.raises(ValueError, match=r"cycle of heads 0 -> 1 -> 2 -> .* -> 12 -> \.\.\., so"):
        tree_arrays([doc])


def test_interleaved_roots_put_a_head_outside_its_sentence():
    """Roots 0 and 1; 2 hangs from 0 and 3 from 1: spaCy starts sentences at 0
    and 1, so token 2's head lies in the sentence before its own."""
    doc = parsed([0, 1, 0, 1])
    assert [s.start for s in doc.sents] == [0, 1]
    with pytest.raises(
        ValueError,
        match=r"sentence 1 \(tokens 1-3\), token 2 'Ann' has head token 0 'Lee': "
        r"that head is outside its sentence.*must not interleave",
    ):
        tree_arrays([doc])


def test_valid_forests_and_docs_without_parse_pass():
    """A non-projective tree, two roots one after the other (two sentences),
    a Doc without a parse and an empty Doc: heads absolute with -1 for roots."""
    crossing = parsed([2, 3, 2, 2])  # arcs 0-2 and 1-3 cross
    two_roots = parsed([0, 0, 2, 2])
    unparsed = Doc(VOCAB, words=["a", "b"])
    empty = Doc(VOCAB, words=[])
    heads, sentence_offsets, doc_offsets = tree_arrays([crossing, two_roots, empty, unparsed])
    assert heads.tolist() == [2, 3, -1, 2, -1, 4, -1, 6, -1, -1]
    assert sentence_offsets.tolist() == [0, 4, 6, 8, 10]
    assert doc_offsets.tolist() == [0, 4, 8, 8, 10]
    features_heads, labels = batch_heads_and_labels([crossing, two_roots, empty])
    assert features_heads.tolist() == [2, 3, 2, 2, 4, 4, 6, 6]
    expected_labels = np.concatenate([d.to_array([DEP]) for d in (crossing, two_roots)])
    assert labels.dtype == np.uint64 and labels[:, 0].tolist() == expected_labels.tolist()


def test_the_check_runs_once_per_batch(monkeypatch):
    calls = []
    original = doc_trees.forest.first_fault
    monkeypatch.setattr(doc_trees.forest, "first_fault", lambda *a: calls.append(1) or original(*a))
    tree_arrays([parsed([1, 1, 1]), parsed([0, 0]), parsed([2, 2, 2, 2])])
    assert len(calls) == 1


@pytest.mark.parametrize("build", [build_dgm_suggester, build_dgm_s_suggester])
def test_the_reported_cycle_no_longer_reaches_the_lattice(build):
    """Heads [1, 2, 0]: valid_spans listed [0, 2] twice; the suggesters now refuse the Doc."""
    with pytest.raises(ValueError, match="the parse is not a forest"):
        build()([parsed([1, 2, 0])], ops=NumpyOps())
    spans = build()([parsed([1, 1, 1])], ops=NumpyOps())
    assert spans.dataXd.shape[0] == len({tuple(s) for s in spans.dataXd.tolist()})
