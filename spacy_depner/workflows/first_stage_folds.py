"""The first stage's cross-validated entities that the second stage of a
two-stage model (Krishnan & Manning 2006) trains on: the training documents
are dealt into folds (document i in fold i % folds, as the document readers
deal them), a first stage is trained on every fold's complement, and each
document gets the entities of the model that did not see it, so the second
stage learns from output as noisy as on new text.

The first-stage config reads its training documents with
``spacy_depner.UNERDocuments.v1`` or ``GUMNamedDocuments.v1`` whose
``folds`` and ``exclude_fold`` are ``${paths.folds}`` and
``${paths.exclude_fold}``; the records go to a JSON-lines file that the
readers' ``first_stage`` setting reads back into the second stage's Docs.
"""

from pathlib import Path
from typing import Dict, List, Sequence, Union

import numpy as np
import srsly
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import load_config, resolve_dot_names

from ..pipeline.entity_pipe import EntityPipe
from ..pipeline.sentence_ner import entities_by_sentence
from ..pipeline.uncertainty import soft_votes
from ..readers.documents import first_stage_records, fold_indices
from ..util.atomic_files import atomic_path
from ..util.progress import progress

FOLD_PATHS = ("folds", "exclude_fold")


def fold_overrides(folds: int, fold: int) -> Dict[str, int]:
    """The config overrides that train the first stage of FOLD: on every document outside it."""
    return {"paths.folds": folds, "paths.exclude_fold": fold}


def fold_arguments(folds: int, fold: int) -> List[str]:
    """``fold_overrides`` as ``spacy train`` command-line arguments."""
    return [arg for key, value in fold_overrides(folds, fold).items() for arg in (f"--{key}", str(value))]


def check_fold_paths(config_path: Path) -> None:
    """A ValueError unless the config's [paths] has ``folds`` and ``exclude_fold``."""
    paths = load_config(config_path, interpolate=False).get("paths", {})
    missing = [name for name in FOLD_PATHS if name not in paths]
    if missing:
        raise ValueError(
            f"{config_path} has no [paths] {' and '.join(missing)}: its [corpora.train] reader "
            "(spacy_depner.UNERDocuments.v1 or GUMNamedDocuments.v1) must take folds = ${paths.folds} "
            "and exclude_fold = ${paths.exclude_fold}, as configs/two_stage_first_ewt.cfg does"
        )


def trained_by_sentence(config_path: Path, overrides: Dict) -> bool:
    """Whether the config's training reader gives one Example per sentence
    (``sentences = true``): its first stage then predicts one sentence at a time."""
    config = load_config(config_path, overrides=overrides, interpolate=False)
    return bool(config["corpora"]["train"].get("sentences", False))


def training_documents(config_path: Path, overrides: Dict) -> List[Example]:
    """Every document of the config's training corpus, fold or not, whole
    (a reader that cuts them into sentences for training is told not to)."""
    import spacy

    whole = {"corpora.train.sentences": False} if trained_by_sentence(config_path, overrides) else {}
    config = load_config(config_path, overrides={**overrides, **fold_overrides(0, -1), **whole}, interpolate=True)
    nlp = spacy.blank(config["nlp"]["lang"])
    (corpus,) = resolve_dot_names(config, [config["training"]["train_corpus"]])
    return list(corpus(nlp))


def input_with_sentences(example: Example, vocab) -> Doc:
    """A copy of the example's input Doc in ``vocab``; with no sentence starts
    of its own (spaCy's ``Corpus`` tokenizes the text again), the reference's,
    aligned to its tokens (``Example.get_aligned_sent_starts``), so that a
    first stage run by sentence reads the data's sentences."""
    doc = Doc(vocab).from_bytes(example.predicted.to_bytes())
    if doc.has_annotation("SENT_START") or not example.reference.has_annotation("SENT_START") or not len(doc):
        return doc
    starts = np.where(example.get_aligned_sent_starts(), 1, -1).astype("uint64")
    return doc.from_array([SENT_START], starts)


def predict_records(
    model: Union[str, Path, Language], examples: Sequence[Example], ids: Sequence[int], by_sentence: bool = False
) -> List[Dict]:
    """First-stage records of the documents ``ids`` of ``examples``, by the
    pipeline ``model``; when its one entity component is one of this
    package's (exact marginals), with the soft votes of each document
    (``soft_votes``: every mention of marginal at least ``VOTE_FLOOR``).
    ``by_sentence``: the pipeline runs on each sentence of a document as a
    Doc of its own (``entities_by_sentence``), as a first stage trained one
    sentence at a time runs in ``sentence_ner``; hard votes only."""
    import spacy

    nlp = model if isinstance(model, Language) else spacy.load(model)
    if by_sentence:
        inputs = [input_with_sentences(examples[i], nlp.vocab) for i in ids]
        return first_stage_records(entities_by_sentence(lambda docs: nlp.pipe(docs, batch_size=64), inputs), ids)
    inputs = [Doc(nlp.vocab).from_bytes(examples[i].predicted.to_bytes()) for i in ids]  # the model's strings
    docs = list(nlp.pipe(inputs, batch_size=64))
    entity_pipes = [pipe for _, pipe in nlp.pipeline if isinstance(pipe, EntityPipe)]
    if len(entity_pipes) != 1 or entity_pipes[0].cfg.get("heads"):
        return first_stage_records(docs, ids)  # no exact marginals to vote with (spaCy's ner, or several)
    votes = [v for start in range(0, len(docs), 64) for v in soft_votes(entity_pipes[0], docs[start : start + 64])]
    return first_stage_records(docs, ids, votes)


def cross_validated_records(
    fold_models: Sequence[Union[str, Path, Language]], examples: Sequence[Example], by_sentence: bool = False
) -> List[Dict]:
    """The records of every document of ``examples``, each from the model of
    its fold (``fold_models[f]``, trained without fold f), by document;
    ``by_sentence`` as ``predict_records``."""
    records = []
    for fold, model in enumerate(progress(fold_models, len(fold_models), "first-stage folds", unit="fold")):
        ids = fold_indices(len(examples), len(fold_models), only_fold=fold)
        records += predict_records(model, examples, ids, by_sentence)
    return sorted(records, key=lambda record: record["document"])


def train_folds(config_path: Path, output: Path, folds: int, overrides: Dict) -> List[Path]:
    """``spacy train`` of the first stage of every fold to OUTPUT/fold<f>; their model-best."""
    from spacy.cli.train import train

    if folds < 2:
        raise ValueError(f"--folds {folds}: cross-validation needs at least 2 folds")
    check_fold_paths(config_path)
    best = []
    for fold in range(folds):
        train(config_path, output / f"fold{fold}", overrides={**overrides, **fold_overrides(folds, fold)})
        best.append(output / f"fold{fold}" / "model-best")
    return best


def write_first_stage_folds(config_path: Path, output: Path, folds: int, overrides: Dict) -> Path:
    """Train the folds' first stages and write every training document's
    cross-validated entities to OUTPUT/first_stage_train.jsonl (its path),
    predicted one sentence at a time when the first stage trains so."""
    fold_models = train_folds(config_path, output, folds, overrides)
    by_sentence = trained_by_sentence(config_path, overrides)
    records = cross_validated_records(fold_models, training_documents(config_path, overrides), by_sentence)
    path = output / "first_stage_train.jsonl"
    with atomic_path(path) as temporary:
        srsly.write_jsonl(temporary, records)
    return path
