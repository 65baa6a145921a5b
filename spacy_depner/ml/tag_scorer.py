"""Thinc tag scorer for the linear-chain component.

``spacy_depner.TagScorer.v1`` maps ``(docs, gazetteer)`` to ``(tag_scores,
transitions)``:

    docs: List[Doc] (B docs, N tokens in all)
    gazetteer: Ints2d (N, G), per token and gazetteer label the position of the
        token in a phrase of that label: 0 none, 1 begin, 2 inside, 3 last,
        4 unit (G = 0 without a gazetteer)
    tag_scores: Floats2d (N, T), one score per BIO / BILOU tag
    transitions: Floats2d (T + 1, T + 1), tag-transition scores, index T the
        document boundary

The layers of ``TokenScorer`` (a tok2vec, optionally joined with each token's
head's vector and dependency-label embedding, a maxout and a linear layer),
with an embedding of the gazetteer codes joined to the maxout layer's input,
and the transition scores. The model knows nothing of the tag constraints or
the chain's dynamic program.
"""

from typing import List, Tuple

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, glorot_uniform_init
from thinc.types import Floats2d, Ints2d

from .token_scorer import init_encoder, init_head, token_layers_model

GAZETTEER_CODES = 5


@registry.architectures("spacy_depner.TagScorer.v1")
def build_tag_scorer(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    maxout_pieces: int = 2,
    dependency_features: bool = False,
    dependency_width: int = 32,
    gazetteer_width: int = 16,
) -> Model[Tuple[List[Doc], Ints2d], Tuple[Floats2d, Floats2d]]:
    """Tag and transition scores over any spaCy tok2vec. ``nO`` (tags) and
    ``n_gazetteer`` (gazetteer labels, 0 for none) are set by the component."""
    return token_layers_model(
        "tag_scorer",
        tag_scorer_forward,
        init_tag_scorer,
        tok2vec,
        hidden_width,
        maxout_pieces,
        dependency_features,
        dependency_width,
        dims={"n_gazetteer": None, "gazetteer_width": gazetteer_width},
        params=("gazetteer_embeddings", "transitions"),
    )


def init_tag_scorer(model: Model, X=None, Y=None) -> Model:
    """nO and n_gazetteer must be set before initialization."""
    n_tags, n_gazetteer = model.get_dim("nO"), model.get_dim("n_gazetteer")
    width = model.get_dim("gazetteer_width")
    sample = init_encoder(model, X[0] if X is not None else None)
    gazetteer = glorot_uniform_init(model.ops, (n_gazetteer * GAZETTEER_CODES, width))
    model.set_param("gazetteer_embeddings", gazetteer)
    init_head(model, sample, n_gazetteer * width)
    model.set_param("transitions", model.ops.alloc2f(n_tags + 1, n_tags + 1))
    return model


def tag_scorer_forward(model: Model, inputs, is_train: bool):
    docs, gazetteer = inputs
    encoder, head = model.layers
    X, backprop_encoder = encoder(docs, is_train)
    embeddings = model.get_param("gazetteer_embeddings")
    n_gazetteer, width = model.get_dim("n_gazetteer"), model.get_dim("gazetteer_width")
    rows = model.ops.xp.asarray(gazetteer, dtype="i").reshape(X.shape[0], n_gazetteer)
    rows = rows + model.ops.xp.arange(n_gazetteer, dtype="i")[None, :] * GAZETTEER_CODES
    G = embeddings[rows.reshape(-1)].reshape(X.shape[0], n_gazetteer * width)
    scores, backprop_head = head(model.ops.xp.hstack([X, G]), is_train)

    def backprop(d_outputs):
        d_scores, d_transitions = d_outputs
        model.inc_grad("transitions", model.ops.asarray2f(d_transitions, dtype="f"))
        d_input = backprop_head(model.ops.asarray2f(d_scores))
        d_G = model.ops.xp.ascontiguousarray(d_input[:, X.shape[1] :]).reshape(-1, width)
        d_embeddings = model.ops.alloc2f(*embeddings.shape)
        model.ops.scatter_add(d_embeddings, rows.reshape(-1), d_G)
        model.inc_grad("gazetteer_embeddings", d_embeddings)
        backprop_encoder(model.ops.xp.ascontiguousarray(d_input[:, : X.shape[1]]))
        return inputs

    return (scores, model.get_param("transitions").copy()), backprop
