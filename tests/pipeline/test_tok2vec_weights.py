"""spacy_depner.tok2vec_from_component.v1: a tok2vec component started from
the weights of another component's own tok2vec (as a sourced ner's)."""

import numpy as np
import pytest
import spacy
from spacy.util import registry

from spacy_depner.pipeline.tok2vec_weights import copy_tok2vec

TOK2VEC = {
    "@architectures": "spacy.Tok2Vec.v2",
    "embed": {
        "@architectures": "spacy.MultiHashEmbed.v2",
        "width": 32,
        "attrs": ["NORM", "SHAPE"],
        "rows": [500, 100],
        "include_static_vectors": False,
    },
    "encode": {
        "@architectures": "spacy.MaxoutWindowEncoder.v2",
        "width": 32,
        "depth": 2,
        "window_size": 1,
        "maxout_pieces": 3,
    },
}


def pipeline(target_width: int = 32):
    """A blank pipeline: a ner with a tok2vec of its own, and a tok2vec component."""
    nlp = spacy.blank("en")
    ner = nlp.add_pipe(
        "ner",
        config={
            "model": {
                "@architectures": "spacy.TransitionBasedParser.v2",
                "state_type": "ner",
                "hidden_width": 16,
                "maxout_pieces": 2,
                "use_upper": True,
                "tok2vec": TOK2VEC,
            }
        },
    )
    target = dict(TOK2VEC, encode=dict(TOK2VEC["encode"], width=target_width))
    target["embed"] = dict(TOK2VEC["embed"], width=target_width)
    nlp.add_pipe("tok2vec", config={"model": target})
    ner.add_label("PERSON")
    nlp.initialize()
    return nlp


def weights(model):
    return [node.get_param(name).copy() for node in model.walk() for name in node.param_names if node.has_param(name)]


def test_the_tok2vec_starts_from_the_ner_s_own_tok2vec_and_stays_a_copy():
    nlp = pipeline()
    source, target = nlp.get_pipe("ner").model.get_ref("tok2vec"), nlp.get_pipe("tok2vec").model
    inner = weights(source)[2:]  # the ner's tok2vec reference ends in a linear projection: its first 2 params
    assert not all(np.array_equal(a, b) for a, b in zip(weights(target), inner))
    callback = registry.callbacks.get("spacy_depner.tok2vec_from_component.v1")(source="ner", target="tok2vec")
    assert callback(nlp) is nlp
    copied = weights(target)
    assert len(copied) == len(inner) and all(np.array_equal(a, b) for a, b in zip(copied, inner))
    doc = nlp.make_doc("Ada Lovelace wrote")
    np.testing.assert_allclose(target.predict([doc])[0], source.layers[0].predict([doc])[0], rtol=1e-6)
    first = next(node for node in target.walk() if node.has_param("E"))
    first.get_param("E")[:] += 1.0
    assert not np.array_equal(first.get_param("E"), next(n for n in source.walk() if n.has_param("E")).get_param("E"))


def test_another_architecture_or_a_missing_component_is_a_clear_error():
    nlp = pipeline(target_width=16)
    with pytest.raises(ValueError, match="has not the architecture of 'ner'"):
        copy_tok2vec(nlp, "ner", "tok2vec")
    with pytest.raises(ValueError, match="no component 'first_ner'"):
        copy_tok2vec(nlp, "first_ner", "tok2vec")
    with pytest.raises(ValueError, match="has no tok2vec reference"):
        copy_tok2vec(nlp, "tok2vec", "tok2vec")
