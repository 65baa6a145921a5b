"""``spacy_depner.FirstStageCorpus.v1``: spaCy's corpus of DocBin files
(what ``spacy.Corpus.v1`` reads, one Example per Doc) with the two settings
that the training of a two-stage model (Krishnan & Manning 2006) needs on a
user's own data:

- ``folds`` / ``exclude_fold``: the Docs dealt round-robin into folds (Doc i
  in fold i % folds), so that ``python -m spacy_depner first-stage-folds``
  trains the first stage on every fold's complement;
- ``sentences``: one Example per sentence of the kept documents, for a first
  stage trained one sentence at a time (``sentence_ner`` runs it so);
- ``first_stage``: the JSON-lines file that command writes, each training
  Doc's entities from the first stage that did not see it, put in the input
  Docs' ``doc.spans[spans_key]`` where the second stage's
  ``spacy_depner.NonLocalFeatures.v1`` layer reads them.

Keep each Doc one document: the document-level features count the other
mentions of the same Doc.
"""

from pathlib import Path
from typing import Callable, Iterable, Optional

from spacy.language import Language
from spacy.training import Corpus, Example
from spacy.util import registry

from .documents import documents_reader


@registry.readers("spacy_depner.FirstStageCorpus.v1")
def create_first_stage_corpus(
    path: Optional[Path],
    first_stage: Optional[Path] = None,
    spans_key: str = "first_stage",
    folds: int = 0,
    exclude_fold: int = -1,
    only_fold: int = -1,
    sentences: bool = False,
    gold_preproc: bool = False,
    limit: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Corpus reader for ``spacy train``: the Docs of the DocBin file(s) at
    ``path`` (as ``spacy.Corpus.v1``: a .spacy file or a folder of them), the
    first ``limit`` only (0: all), then the kept folds, with the first
    stage's entities of ``first_stage`` (records by Doc index, as
    ``first-stage-folds`` writes them) in ``doc.spans[spans_key]`` of the input;
    with ``sentences``, one Example per sentence of the kept Docs (their
    reference's sentences), so that a first stage trains one sentence at a
    time while the folds still deal whole documents."""
    if path is None:
        raise ValueError(
            "spacy_depner.FirstStageCorpus.v1 has no path: give the DocBin file, e.g. --paths.train train.spacy"
        )
    return documents_reader(
        lambda nlp: list(Corpus(path, gold_preproc=gold_preproc, limit=limit)(nlp)),
        str(path),
        "given",
        limit,
        folds,
        exclude_fold,
        only_fold,
        first_stage,
        spans_key,
        sentences,
    )
