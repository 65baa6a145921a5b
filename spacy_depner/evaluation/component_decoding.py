"""One component of a trained pipeline decoded alone: the component to
tune (``tunable_component``), its inputs annotated once by the other
components (``component_inputs``), then ``decode`` runs it with other
settings, and the span group where it writes its probabilities
(``probability_key``)."""

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

from ..pipeline.entity_pipe import EntityPipe, entity_factories
from ..util.progress import progress


def require_component(nlp, model: Path, name: str) -> None:
    """A ValueError unless the pipeline at ``model`` has the component ``name``."""
    if name not in nlp.pipe_names:
        raise ValueError(f"{model} has no component {name!r} (it has {nlp.pipe_names})")


def probability_key(nlp, name: str) -> Optional[str]:
    """The span group in which the component ``name`` writes its spans with
    their probabilities in ``attrs["scores"]``: ``spans_key`` of an entity
    component of this package, the key of spaCy's spancat; None for a
    component that writes none (spaCy's ner)."""
    from spacy.pipeline import SpanCategorizer

    pipe = nlp.get_pipe(name)
    if isinstance(pipe, SpanCategorizer):
        return pipe.key
    if isinstance(pipe, EntityPipe):
        return pipe.spans_key
    return None


def tunable_component(nlp, model: Path, name: Optional[str], setting: str) -> str:
    """The component whose ``setting`` is tuned: ``name``, checked to have
    the setting and to write span probabilities, or the one such component
    of the pipeline (a ValueError when there is none, or several)."""
    candidates = [
        n
        for n in nlp.pipe_names
        if setting in (getattr(nlp.get_pipe(n), "settings", None) or {}) and probability_key(nlp, n)
    ]
    if name is not None:
        require_component(nlp, model, name)
        if name not in candidates:
            factory = nlp.get_pipe_meta(name).factory
            raise ValueError(
                f"the component {name!r} ({factory}) of {model} has no span probabilities to tune "
                f"{setting} on: give a {entity_factories()} component "
                f"(this pipeline's: {candidates or 'none'})"
            )
        return name
    if len(candidates) != 1:
        what = "none" if not candidates else f"several ({candidates}): choose one with --component"
        raise ValueError(
            f"{model} needs one component with span probabilities and a {setting} setting "
            f"({entity_factories()}), it has {what}"
        )
    return candidates[0]


def component_inputs(nlp, name: str, examples: Sequence) -> List:
    """Copies of the examples' input Docs annotated by every component of
    ``nlp`` but ``name`` (once; a listener of a shared tok2vec then reads
    ``doc.tensor``), to be decoded by ``name`` alone (``decode``)."""
    with nlp.select_pipes(disable=[name]):
        docs = [eg.predicted.copy() for eg in examples]
        return list(progress(nlp.pipe(docs), len(docs), "annotate"))


@contextmanager
def settings_applied(pipe, **settings) -> Iterator[None]:
    """``settings`` in ``pipe.settings`` for the block, the previous values restored after."""
    saved = {key: pipe.settings[key] for key in settings}
    pipe.settings.update(settings)
    try:
        yield
    finally:
        pipe.settings.update(saved)


def decode(pipe, docs: Sequence, **settings) -> List:
    """Copies of the Docs annotated by the component ``pipe`` alone, with
    ``settings`` in ``pipe.settings`` for the time of the decoding (restored
    after). Each decoding starts from the inputs (a component keeps the
    entities a Doc already has, so it must not see those of an earlier decoding)."""
    with settings_applied(pipe, **settings):
        return list(pipe.pipe([doc.copy() for doc in docs]))
