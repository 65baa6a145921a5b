"""Thinc per-token scorer.

``spacy_depner.TokenScorer.v1`` maps ``docs`` to ``token_scores``:

    docs: List[Doc] (B docs, N tokens in all)
    token_scores: Floats2d (N, nO), nO set by the component

A tok2vec embeds the tokens; optionally each token's vector is joined with its
head's vector and dependency-label embedding (``dependency_features``); a
maxout layer and a linear layer give the scores. No gazetteer input and no
transition scores: ``TagScorer`` is these layers plus both.
"""

from typing import Callable, Dict, List, Optional, Sequence, Tuple

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Maxout, Model, chain
from thinc.types import Floats2d

from .dependency_features import token_encoder


def maxout_output(hidden_width: int, maxout_pieces: int) -> Tuple[Model, Model]:
    """The maxout layer and the linear output layer (nO set at initialization)
    of every token scorer."""
    return Maxout(nO=hidden_width, nP=maxout_pieces, normalize=True), Linear()


def token_layers_model(
    name: str,
    forward: Callable,
    init: Callable,
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int,
    maxout_pieces: int,
    dependency_features: bool,
    dependency_width: int,
    dims: Optional[Dict[str, Optional[int]]] = None,
    params: Sequence[str] = (),
) -> Model:
    """A model whose layers are (encoder, head): the token vectors (N, width)
    and the maxout and linear layers on them (ref ``output_layer``), with
    ``dims`` (nO included) and ``params`` of its own."""
    encoder = token_encoder(tok2vec, dependency_features, dependency_width)
    maxout, output_layer = maxout_output(hidden_width, maxout_pieces)
    return Model(
        name,
        forward,
        init=init,
        layers=[encoder, chain(maxout, output_layer)],
        dims={"nO": None, **(dims or {})},
        params={param: None for param in params},
        refs={"tok2vec": tok2vec, "output_layer": output_layer},
        attrs={"dependency_features": dependency_features},
    )


def init_encoder(model: Model, docs: Optional[List[Doc]]) -> Optional[Floats2d]:
    """Initialize the encoder (``model.layers[0]``), set the output layer's nO
    to the model's nO, and return the encoded sample (None without docs)."""
    encoder = model.layers[0]
    encoder.initialize(X=docs)
    model.get_ref("output_layer").set_dim("nO", model.get_dim("nO"))
    return encoder(docs, is_train=False)[0] if docs else None


def init_head(model: Model, sample: Optional[Floats2d], extra_width: int = 0) -> None:
    """Initialize the head (``model.layers[1]``) on the encoded sample plus
    ``extra_width`` zero columns (its other inputs)."""
    head = model.layers[1]
    if sample is None:
        head.initialize()
    else:
        head.initialize(X=model.ops.xp.hstack([sample, model.ops.alloc2f(sample.shape[0], extra_width)]))


@registry.architectures("spacy_depner.TokenScorer.v1")
def build_token_scorer(
    tok2vec: Model[List[Doc], List[Floats2d]],
    hidden_width: int = 128,
    maxout_pieces: int = 2,
    dependency_features: bool = False,
    dependency_width: int = 32,
) -> Model[List[Doc], Floats2d]:
    """Per-token scores (N, nO) over any spaCy tok2vec; ``nO`` is set by the
    component. dependency_features: join each token with its head's vector and
    its dependency label embedding (needs a parse on every Doc)."""
    return token_layers_model(
        "token_scorer",
        token_scorer_forward,
        init_token_scorer,
        tok2vec,
        hidden_width,
        maxout_pieces,
        dependency_features,
        dependency_width,
    )


def init_token_scorer(model: Model, X: Optional[List[Doc]] = None, Y=None) -> Model:
    """nO must be set before initialization."""
    init_head(model, init_encoder(model, X))
    return model


def token_scorer_forward(model: Model, docs: List[Doc], is_train: bool):
    encoder, head = model.layers
    X, backprop_encoder = encoder(docs, is_train)
    scores, backprop_head = head(X, is_train)

    def backprop(d_scores: Floats2d) -> List[Doc]:
        backprop_encoder(backprop_head(d_scores))
        return docs

    return scores, backprop
