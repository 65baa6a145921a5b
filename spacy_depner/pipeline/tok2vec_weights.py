"""Starting a tok2vec from the weights of another component's tok2vec.

A pretrained pipeline's ``ner`` often has a tok2vec of its own (en_core_web_sm's
does: 4 hashed attributes, width 96), trained for entities, while its shared
``tok2vec`` was trained for the tagger and parser. The callback
``spacy_depner.tok2vec_from_component.v1`` (``[initialize.after_init]``) copies
the weights of ``source``'s tok2vec (the ``tok2vec`` reference of its model,
or the layer inside it with ``target``'s parameter shapes, e.g. of a sourced
and frozen ``ner``) into the model of the tok2vec component
``target``, after the pipeline is initialized, so that a new entity component
listening to ``target`` starts from an entity-trained encoder and fine-tunes it
while ``source`` keeps its own copy. ``target`` must have the same
architecture (layers and parameter shapes) as ``source``'s tok2vec.
"""

from typing import Callable, List, Tuple

from spacy.language import Language
from spacy.util import registry
from thinc.api import Model


def parameter_shapes(model: Model) -> List[Tuple[str, Tuple[int, ...]]]:
    """(layer name, parameter shape) of every parameter of ``model``, in walk order."""
    return [
        (node.name, tuple(node.get_param(name).shape))
        for node in model.walk()
        for name in node.param_names
        if node.has_param(name)
    ]


def copy_tok2vec(nlp: Language, source: str, target: str) -> Language:
    """Copy the weights of ``source``'s tok2vec into the model of the component ``target``."""
    for name in (source, target):
        if name not in nlp.component_names:
            raise ValueError(
                f"tok2vec_from_component: the pipeline has no component {name!r} (it has {nlp.component_names}); "
                "name the component whose tok2vec gives the weights (source) and the tok2vec to start (target)"
            )
    model = nlp.get_pipe(source).model
    if not model.has_ref("tok2vec"):
        raise ValueError(
            f"tok2vec_from_component: the model of {source!r} has no tok2vec reference to copy; "
            "give a component with a tok2vec of its own, such as en_core_web_sm's ner"
        )
    into = nlp.get_pipe(target).model
    # the reference may wrap the tok2vec (a transition-based ner's is tok2vec >> list2array >> linear)
    wanted = parameter_shapes(into)
    found = [node for node in model.get_ref("tok2vec").walk() if parameter_shapes(node) == wanted]
    if not found:
        raise ValueError(
            f"tok2vec_from_component: {target!r} has not the architecture of {source!r}'s tok2vec "
            f"(parameters {wanted} against {parameter_shapes(model.get_ref('tok2vec'))}); give "
            f"{target!r} the same embed and encode settings (attrs, rows, width, depth, window_size, maxout_pieces)"
        )
    into.from_bytes(found[0].to_bytes())
    return nlp


@registry.callbacks("spacy_depner.tok2vec_from_component.v1")
def make_tok2vec_from_component(source: str = "ner", target: str = "tok2vec") -> Callable[[Language], Language]:
    """An ``[initialize.after_init]`` callback: ``copy_tok2vec(nlp, source, target)``."""

    def tok2vec_from_component(nlp: Language) -> Language:
        return copy_tok2vec(nlp, source, target)

    return tok2vec_from_component
