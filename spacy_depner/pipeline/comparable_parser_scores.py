"""Attachment scores only against trees of the parser's own scheme.

A pretrained pipeline's parser (en_core_web_sm's follows ClearNLP's labels
and head rules) scored against reference trees of another scheme (UD, as in
DocBins converted from CoNLL-U) gives a UAS of about 58 that measures the
difference of the schemes, not the parser. The callback
``spacy_depner.comparable_parser_scores.v1`` (``[nlp.after_pipeline_creation]``)
wraps the parser's scorer in a ``ComparableParserScorer``: when the reference
trees use dependency labels the parser does not have, it reports no
``dep_*`` score and warns once, saying why; otherwise it scores as before.

The wrapper is a picklable object (a pipeline that carries it pickles, so
``nlp.pipe(n_process=2)`` works under the spawn start method) that reads the
parser's labels when it scores, not when it is made: after ``spacy.load``
they are those of the loaded weights. A pipeline loaded without the parser
(``disable``, ``exclude`` or an ``enable`` list without it) has nothing to
wrap and loads as it is.
"""

import warnings
from typing import Callable, Dict, Iterable

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

ROOT_LABELS = {"root", ""}


def foreign_labels(examples: Iterable[Example], labels: Iterable[str]) -> list:
    """The references' dependency labels (lowercased, the root's left out)
    that are not among the parser's ``labels``, sorted."""
    own = {label.lower() for label in labels}
    seen = {token.dep_.lower() for eg in examples if eg.reference.has_annotation("DEP") for token in eg.reference}
    return sorted(seen - own - ROOT_LABELS)


class ComparableParserScorer:
    """The scorer of ``parser`` (a pipeline component with ``labels``) that
    returns no score when the references' trees are of another scheme:
    ``scorer`` is the parser's own scorer, called otherwise."""

    def __init__(self, scorer: Callable, parser) -> None:
        self.scorer = scorer
        self.parser = parser
        self.warned = False

    def __call__(self, examples: Iterable[Example], **kwargs) -> Dict:
        examples = list(examples)
        foreign = foreign_labels(examples, self.parser.labels)
        if not foreign:
            return self.scorer(examples, **kwargs)
        if not self.warned:
            self.warned = True
            shown = ", ".join(foreign[:8]) + (", ..." if len(foreign) > 8 else "")
            warnings.warn(
                f"No UAS/LAS for the parser '{self.parser.name}': the reference trees use dependency labels "
                f"it does not have ({shown}), so they follow another annotation scheme (e.g. UD trees "
                "against en_core_web_sm's ClearNLP-style parser) and an attachment score against them would "
                "measure the difference of the schemes, not the parser. Score it on trees of its own scheme.",
                stacklevel=2,
            )
        return {}


@registry.callbacks("spacy_depner.comparable_parser_scores.v1")
def make_comparable_parser_scores(parser: str = "parser") -> Callable[[Language], Language]:
    """``[nlp.after_pipeline_creation]``: the component ``parser`` reports
    attachment scores only against reference trees of its own label set
    (``ComparableParserScorer``). A pipeline without that component (loaded
    with ``exclude`` or an ``enable`` list without it) is returned unchanged;
    a disabled parser is wrapped, so that enabling it later scores as above."""

    def wrap(nlp: Language) -> Language:
        if parser not in nlp.component_names:
            return nlp
        component = nlp.get_pipe(parser)
        if not hasattr(component, "labels"):
            raise ValueError(
                f"spacy_depner.comparable_parser_scores.v1: the component '{parser}' has no labels, so "
                "it is no parser; set parser to the name of the pipeline's parser "
                f"(its components: {nlp.component_names})"
            )
        if not isinstance(component.scorer, ComparableParserScorer):
            component.scorer = ComparableParserScorer(component.scorer, component)
        return nlp

    return wrap
