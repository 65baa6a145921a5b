"""Tiny Docs, a tiny tok2vec and weight copying for the scorer tests."""

import numpy as np
import pytest
from spacy.ml.featureextractor import FeatureExtractor
from spacy.tokens import Doc
from spacy.vocab import Vocab
from thinc.api import HashEmbed, chain, fix_random_seed, with_array

WIDTH = 8
VOCAB = Vocab()
TEXTS = [("Mary saw the Bank of England .".split(), [1, 1, 4, 1, 3, 3, 1]), ("Paris is big".split(), [2, 2, 2])]
DEPS = [["nsubj", "ROOT", "det", "dobj", "prep", "pobj", "punct"], ["nsubj", "cop", "ROOT"]]


def make_docs(parsed=False):
    if not parsed:
        return [Doc(VOCAB, words=words) for words, _ in TEXTS]
    return [Doc(VOCAB, words=words, heads=heads, deps=deps) for (words, heads), deps in zip(TEXTS, DEPS)]


def batch_spans(docs, max_width=3):
    spans, offset = [], 0
    for doc in docs:
        spans += [(offset + a, offset + b) for a in range(len(doc)) for b in range(a, min(a + max_width, len(doc)))]
        offset += len(doc)
    return np.asarray(spans, dtype=np.int64)


def small_tok2vec():
    fix_random_seed(0)  # the same weights whatever the order of the tests
    return chain(FeatureExtractor(["ORTH"]), with_array(HashEmbed(nO=WIDTH, nV=64, column=0, seed=3)))


def copy_weights(source, target, output_rows=slice(None)):
    """Set every parameter of ``target`` to ``source``'s (output layer: rows ``output_rows``)."""
    source_output = source.get_ref("output_layer")
    for a, b in zip(source.walk(), target.walk()):
        for name in b.param_names:
            value = a.get_param(name)
            b.set_param(name, value[output_rows].copy() if a is source_output else value.copy())


def assert_gradients_match(model, loss, checks, eps=1e-2):
    """After a backprop of ``loss``'s gradient: each (node, param) gradient's
    largest entry equals the central finite difference of ``loss()``."""
    for node, name in checks:
        grad = node.get_grad(name)
        index = np.unravel_index(np.abs(grad).argmax(), grad.shape)
        param = node.get_param(name).copy()
        shifted = param.copy()
        shifted[index] += eps
        node.set_param(name, shifted)
        up = loss()
        shifted[index] -= 2 * eps
        node.set_param(name, shifted)
        down = loss()
        node.set_param(name, param)
        assert grad[index] == pytest.approx((up - down) / (2 * eps), rel=2e-2, abs=1e-3), (name, index)
