"""Attachment scores only against trees of the parser's own scheme.

A pretrained pipeline's parser (en_core_web_sm's follows ClearNLP's labels
and head rules) scored against reference trees of another scheme (UD, as in
DocBins converted from CoNLL-U) gives a UAS of about 58 that measures the
difference of the schemes, not the parser. The callback
``spacy_depner.comparable_parser_scores.v1`` (``[nlp.after_pipeline_creation]``)
wraps the parser's scorer: when the reference trees use dependency labels
the parser does not have, it reports no ``dep_*`` score and warns once,
saying why; otherwise it scores as before.
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


def comparable_scorer(scorer: Callable, labels: Iterable[str], name: str) -> Callable:
    """``scorer`` that returns no score when the references' trees are of another scheme."""
    labels = tuple(labels)
    warned = []

    def score(examples: Iterable[Example], **kwargs) -> Dict:
        examples = list(examples)
        foreign = foreign_labels(examples, labels)
        if not foreign:
            return scorer(examples, **kwargs)
        if not warned:
            warned.append(True)
            shown = ", ".join(foreign[:8]) + (", ..." if len(foreign) > 8 else "")
            warnings.warn(f"No UAS/LAS for the parser '{name}': the reference trees use dependency labels it does not "
                          f"have ({shown}), so they follow another annotation scheme (e.g. UD trees against "
                          "en_core_web_sm's ClearNLP-style parser) and an attachment score against them would measure "
                          "the difference of the schemes, not the parser. Score it on trees of its own scheme.",
                          stacklevel=2)
        return {}

    return score


@registry.callbacks("spacy_depner.comparable_parser_scores.v1")
def make_comparable_parser_scores(parser: str = "parser") -> Callable[[Language], Language]:
    """``[nlp.after_pipeline_creation]``: the component ``parser`` reports
    attachment scores only against reference trees of its own label set."""

    def wrap(nlp: Language) -> Language:
        if parser not in nlp.pipe_names:
            raise ValueError(f"spacy_depner.comparable_parser_scores.v1: the pipeline has no component '{parser}' "
                             f"(its components: {nlp.pipe_names}); set parser to the name of its parser")
        component = nlp.get_pipe(parser)
        component.scorer = comparable_scorer(component.scorer, component.labels, parser)
        return nlp

    return wrap
