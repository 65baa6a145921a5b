"""The "train on your own data" recipe end to end, with spaCy's own train and
evaluate: DocBins without trees (words, spaces, sentence starts and entities,
as an annotation tool exports them); ``configs/own_data/own_data_dgm.cfg`` with a parser
trained on the fixture trees, sourced, frozen and annotating, in both kinds
(listening to a ``tok2vec`` component as en_core_web_sm's does, or with its
own tok2vec); ``configs/own_data/own_data_nested.cfg`` on a span group with no parser."""

import os
import warnings
from pathlib import Path
from typing import Optional

import pytest
import spacy
import srsly
from spacy.cli.evaluate import evaluate
from spacy.cli.train import train
from spacy.tokens import Doc, DocBin, Span
from thinc.api import Config

from spacy_depner.readers.genia import genia_examples, read_genia
from spacy_depner.readers.uner import corpus_examples, read_uner_corpus

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data"
SM = Path(os.environ.get("DEPNER_DATA", "/work/shared/data")) / "models" / "en_core_web_sm-3.8.0"
needs_sm = pytest.mark.skipif(
    not (SM / "config.cfg").is_file(),
    reason=f"no en_core_web_sm at {SM} (set DEPNER_DATA to the data folder that has models/)",
)
FIXTURE_PATHS = {
    f"paths.{split}_{kind}": str(DATA / f"tiny.{kind}") for split in ("train", "dev") for kind in ("conllu", "iob2")
}
TEXTS = ["John Smith visited New York.", "I don't like Acme Corp in Paris", "Visit Lake Tahoe"]

pytestmark = pytest.mark.slow


def training_overrides(log: Path, steps: int, every: int) -> dict:
    """A short run that logs each evaluation's losses and scores to ``log`` (JSON lines)."""
    return {
        "training.max_steps": steps,
        "training.eval_frequency": every,
        "training.logger": {
            "@loggers": "spacy.ConsoleLogger.v3",
            "progress_bar": None,
            "console_output": False,
            "output_file": str(log),
        },
    }


def loss_per_step(log: Path, component: str):
    """(step, the component's mean loss per step since the previous record) of each record."""
    records, previous, means = list(srsly.read_jsonl(log)), -1, []
    for record in records:
        means.append((record["step"], record["losses"][component] / (record["step"] - previous)))
        previous = record["step"]
    return means


def parameters(*models):
    """Every parameter array of the models, as sorted (shape, bytes) pairs."""
    return sorted(
        (node.get_param(name).shape, node.get_param(name).tobytes())
        for model in models
        for node in model.walk()
        for name in node.param_names
        if node.has_param(name)
    )


def assert_chain_reads_the_frozen_tok2vec(trained, sm):
    """chain_ner listens to the pretrained pipeline's own tok2vec, which training never updated."""
    assert parameters(trained.get_pipe("tok2vec").model) == parameters(sm.get_pipe("tok2vec").model)
    assert "chain_ner" in trained.get_pipe("tok2vec").listening_components


@pytest.fixture(scope="module")
def entity_docbin(tmp_path_factory) -> Path:
    """The fixture sentences as a DocBin without trees: one Doc per sentence."""
    nlp = spacy.blank("en")
    docs = []
    for eg in corpus_examples(nlp.vocab, read_uner_corpus(DATA / "tiny.conllu", DATA / "tiny.iob2"), "predicted"):
        gold = eg.reference
        doc = Doc(
            nlp.vocab,
            words=[t.text for t in gold],
            spaces=[bool(t.whitespace_) for t in gold],
            sent_starts=[bool(t.is_sent_start) for t in gold],
        )
        doc.ents = [Span(doc, ent.start, ent.end, ent.label_) for ent in gold.ents]
        docs.append(doc)
    assert [doc.text for doc in docs] == TEXTS and not any(doc.has_annotation("DEP") for doc in docs)
    path = tmp_path_factory.mktemp("docbins") / "entities.spacy"
    DocBin(docs=docs).to_disk(path)
    return path


@pytest.fixture(scope="module", params=["listener", "own_tok2vec"])
def parser_path(request, tmp_path_factory) -> Path:
    """A parser pipeline trained with ``spacy train`` on the fixture trees:
    configs/parser_ewt.cfg (tok2vec component + listening parser), or the same
    with the tok2vec moved into the parser."""
    folder = tmp_path_factory.mktemp(f"parser_{request.param}")
    config_path = ROOT / "configs" / "parser_ewt.cfg"
    if request.param == "own_tok2vec":
        config = Config().from_disk(config_path, overrides=FIXTURE_PATHS)
        config["nlp"]["pipeline"] = ["parser"]
        config["components"]["parser"]["model"]["tok2vec"] = config["components"].pop("tok2vec")["model"]
        config_path = folder / "parser.cfg"
        config.to_disk(config_path)
    overrides = {
        **FIXTURE_PATHS,
        **training_overrides(folder / "log.jsonl", 40, 20),
        "components.parser.min_action_freq": 1,
    }
    train(config_path, folder / "out", overrides=overrides)
    return folder / "out" / "model-last"


def test_dgm_ner_trains_and_predicts_on_the_trees_of_a_sourced_frozen_parser(entity_docbin, parser_path, tmp_path):
    config = ROOT / "configs" / "own_data" / "own_data_dgm.cfg"
    if "tok2vec" not in spacy.load(parser_path).pipe_names:
        # a pipeline with no tok2vec to share: the recipe's own CNN tok2vec in its place, as the config's header says
        composed = Config().from_disk(config, interpolate=False)
        composed["components"]["tok2vec"] = Config().from_disk(
            ROOT / "configs" / "recipe" / "tok2vec.cfg", interpolate=False
        )["components"]["tok2vec"]
        config = tmp_path / "own_data_dgm_cnn.cfg"
        composed.to_disk(config)
    train(
        config,
        tmp_path / "out",
        overrides={
            "paths.train": str(entity_docbin),
            "paths.dev": str(entity_docbin),
            "paths.pretrained": str(parser_path),
            **training_overrides(tmp_path / "log.jsonl", 60, 20),
        },
    )
    # The DocBin has no trees, and dgm_ner's suggester and dependency features raise without
    # them: the steps ran on the annotating parser's trees. The loss fell:
    (_, first), *_, (last_step, last) = loss_per_step(tmp_path / "log.jsonl", "dgm_ner")
    assert last_step == 60 and first > 0 and last < first / 10

    source, trained = spacy.load(parser_path), spacy.load(tmp_path / "out" / "model-last")
    assert trained.pipe_names == ["parser", "tok2vec", "dgm_ner"]
    listened = [source.get_pipe(name).model for name in source.pipe_names if name != "parser"]
    source_weights = parameters(source.get_pipe("parser").model, *listened)
    assert source_weights and parameters(trained.get_pipe("parser").model) == source_weights  # frozen
    for doc, source_doc in zip(trained.pipe(TEXTS), source.pipe(TEXTS)):
        assert doc.has_annotation("DEP")
        assert [(t.head.i, t.dep_) for t in doc] == [(t.head.i, t.dep_) for t in source_doc]
    assert ("John Smith", "PER") in {(ent.text, ent.label_) for ent in trained(TEXTS[0]).ents}

    scores = evaluate(str(tmp_path / "out" / "model-last"), entity_docbin, output=tmp_path / "scores.json")
    assert srsly.read_json(tmp_path / "scores.json")["ents_f"] == pytest.approx(scores["ents_f"])
    # "Lake Tahoe" is no DGM valid span of the tree Visit -> Lake, Visit -> Tahoe: the model
    # finds every other entity, each entity its lattice holds.
    assert scores["ents_lattice_coverage"] == pytest.approx(0.8)
    assert scores["ents_r"] == pytest.approx(scores["ents_lattice_coverage"])
    assert scores["ents_f"] > 0.7


def train_on_sm(config: str, component: str, docbin: Path, tmp_path: Path, settings: Optional[dict] = None):
    """Train configs/own_data/CONFIG on the DocBin with the real en_core_web_sm, 60 steps (further
    config ``settings``); check that the component's loss fell; the trained pipeline and en_core_web_sm."""
    train(
        ROOT / "configs" / "own_data" / config,
        tmp_path / "out",
        overrides={
            "paths.train": str(docbin),
            "paths.dev": str(docbin),
            "paths.pretrained": str(SM),
            **training_overrides(tmp_path / "log.jsonl", 60, 20),
            **(settings or {}),
        },
    )
    (_, first), *_, (last_step, last) = loss_per_step(tmp_path / "log.jsonl", component)
    assert last_step == 60 and first > 0 and last < first / 5
    return spacy.load(tmp_path / "out" / "model-last"), spacy.load(SM)


@needs_sm
def test_dgm_ner_added_to_en_core_web_sm_trains_loads_and_scores(entity_docbin, tmp_path):
    """The README's first example: own_data_dgm.cfg with the real en_core_web_sm."""
    trained, sm = train_on_sm("own_data_dgm.cfg", "dgm_ner", entity_docbin, tmp_path)
    assert trained.pipe_names == ["parser", "tok2vec", "dgm_ner"]
    for doc, sm_doc in zip(trained.pipe(TEXTS), sm.pipe(TEXTS)):  # the released parser's trees, untouched
        assert [(t.head.i, t.dep_) for t in doc] == [(t.head.i, t.dep_) for t in sm_doc]
    assert ("John Smith", "PER") in {(ent.text, ent.label_) for ent in trained(TEXTS[0]).ents}
    with_trees = tmp_path / "with_ud_trees.spacy"  # the same Docs with UD trees, as convert conllu-iob2 writes them
    nlp = spacy.blank("en")
    DocBin(
        docs=[
            eg.reference
            for eg in corpus_examples(nlp.vocab, read_uner_corpus(DATA / "tiny.conllu", DATA / "tiny.iob2"), "given")
        ]
    ).to_disk(with_trees)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = evaluate(str(tmp_path / "out" / "model-last"), with_trees)
    assert "dep_uas" not in scores and scores["ents_f"] > 0.5
    assert any("another annotation scheme" in str(w.message) for w in caught)


@needs_sm
def test_nested_ner_trains_on_a_span_group_without_a_parser(tmp_path):
    nlp = spacy.blank("en")
    docs = [eg.reference for eg in genia_examples(nlp.vocab, read_genia(DATA / "nested_genia.jsonl"), "nested_ner")]
    DocBin(docs=docs).to_disk(tmp_path / "mentions.spacy")
    data = str(tmp_path / "mentions.spacy")
    train(
        ROOT / "configs" / "own_data" / "own_data_nested.cfg",
        tmp_path / "out",
        overrides={
            "paths.train": data,
            "paths.dev": data,
            "paths.pretrained": str(SM),
            **training_overrides(tmp_path / "log.jsonl", 60, 20),
        },
    )
    (_, first), *_, (last_step, last) = loss_per_step(tmp_path / "log.jsonl", "nested_ner")
    assert last_step == 60 and first > 0 and last < first / 10

    trained = spacy.load(tmp_path / "out" / "model-last")
    assert trained.pipe_names == ["sentencizer", "tok2vec", "nested_ner"]
    doc = trained("Both human T cells and mouse B cells were used. IL-7 gene expression was high.")
    assert [sent.text for sent in doc.sents] == [
        "Both human T cells and mouse B cells were used.",
        "IL-7 gene expression was high.",
    ]
    scores = evaluate(
        str(tmp_path / "out" / "model-last"),
        tmp_path / "mentions.spacy",
        output=tmp_path / "scores.json",
        spans_key="nested_ner",
    )
    assert srsly.read_json(tmp_path / "scores.json")["spans_nested_ner_f"] == pytest.approx(
        scores["spans_nested_ner_f"]
    )
    # 11 of the 14 mentions fit the quadratic structure (at most one child longer than a word,
    # one type per span): recall is at most 11/14.
    assert scores["spans_nested_ner_p"] > 0.9
    assert 0.7 <= scores["spans_nested_ner_r"] <= 11 / 14 + 1e-9


@needs_sm
@pytest.mark.parametrize(
    "config, pipe_names, leave_one_out",
    [
        ("own_data_two_stage.cfg", ["parser", "first_ner", "first_stage_spans", "tok2vec", "chain_ner"], False),
        ("own_data_two_stage_loo.cfg", ["parser", "first_ner", "first_stage_spans", "tok2vec", "chain_ner"], True),
        (
            "own_data_two_stage_pretrained_window.cfg",
            ["tok2vec", "parser", "first_ner", "first_stage_spans", "chain_ner"],
            True,
        ),
    ],
)
def test_two_stage_over_the_sourced_frozen_ner_of_en_core_web_sm(
    config, pipe_names, leave_one_out, entity_docbin, tmp_path
):
    """own_data_two_stage.cfg: en_core_web_sm's ner, frozen, is the first stage; its entities,
    in its own OntoNotes labels, are the features of chain_ner, which learns the data's labels;
    own_data_two_stage_loo.cfg the same with leave-one-out corpus features;
    own_data_two_stage_pretrained_window.cfg the same over the pipeline's own tok2vec (frozen),
    with a window layer."""
    trained, sm = train_on_sm(config, "chain_ner", entity_docbin, tmp_path)
    assert trained.pipe_names == pipe_names
    assert parameters(trained.get_pipe("first_ner").model) == parameters(sm.get_pipe("ner").model)  # frozen
    layer = next(node for node in trained.get_pipe("chain_ner").model.walk() if node.name == "nonlocal_features")
    assert set(layer.attrs["labels"]) <= set(sm.get_pipe("ner").labels) and "PERSON" in layer.attrs["labels"]
    assert layer.attrs["local"] is True and layer.attrs["leave_one_out"] is leave_one_out
    if pipe_names[0] == "tok2vec":
        assert_chain_reads_the_frozen_tok2vec(trained, sm)
    for doc, sm_doc in zip(trained.pipe(TEXTS), sm.pipe(TEXTS)):
        assert [(e.start, e.end, e.label_) for e in doc.spans["first_stage"]] == [
            (e.start, e.end, e.label_) for e in sm_doc.ents
        ]
        assert {ent.label_ for ent in doc.ents} <= {"PER", "ORG", "LOC"}
    assert ("John Smith", "PER") in {(ent.text, ent.label_) for ent in trained(TEXTS[0]).ents}
    assert evaluate(str(tmp_path / "out" / "model-last"), entity_docbin)["ents_f"] > 0.7


@needs_sm
@pytest.mark.parametrize("config", ["own_data_two_stage_stacked.cfg", "own_data_two_stage_stacked_loo.cfg"])
def test_two_stage_stacked_from_a_users_docbin_in_the_three_documented_steps(config, entity_docbin, tmp_path):
    """own_data_two_stage_stacked.cfg (and its leave-one-out twin) as its header says:
    own_data_ner_sourced.cfg trained and cross-validated on the user's DocBin (first-stage-folds),
    then the second stage over both first stages: the training Docs read the folds' entities, new
    text the trained ner's."""
    from spacy_depner.readers.documents import read_first_stage
    from spacy_depner.workflows.first_stage_folds import write_first_stage_folds

    data = {"paths.train": str(entity_docbin), "paths.dev": str(entity_docbin), "paths.pretrained": str(SM)}
    short = {"training.max_steps": 2, "training.eval_frequency": 1}
    sourced = ROOT / "configs" / "own_data" / "own_data_ner_sourced.cfg"
    records_path = write_first_stage_folds(sourced, tmp_path / "folds", 3, {**data, **short})
    records = read_first_stage(records_path)
    tokens = [len(spacy.blank("en").make_doc(text)) for text in TEXTS]  # the reader's input Docs
    assert sorted(records) == [0, 1, 2] and [records[i][1]["tokens"] for i in range(3)] == tokens
    trained, sm = train_on_sm(
        config,
        "chain_ner",
        entity_docbin,
        tmp_path,
        {
            "paths.trained_ner": str(tmp_path / "folds" / "fold0" / "model-best"),
            "paths.trained_stage_train": str(records_path),
        },
    )
    assert trained.pipe_names == [
        "parser",
        "first_ner",
        "first_stage_spans",
        "trained_ner",
        "trained_stage_spans",
        "tok2vec",
        "chain_ner",
    ]
    fold0 = spacy.load(tmp_path / "folds" / "fold0" / "model-best")
    assert parameters(trained.get_pipe("trained_ner").model) == parameters(fold0.get_pipe("ner").model)  # frozen
    layers = {
        n.attrs["spans_key"]: n for n in trained.get_pipe("chain_ner").model.walk() if n.name == "nonlocal_features"
    }
    assert set(layers) == {"first_stage", "trained_stage"}
    assert [layer.attrs["leave_one_out"] for layer in layers.values()] == [config.endswith("_loo.cfg")] * 2
    for doc, sm_doc, fold_doc in zip(trained.pipe(TEXTS), sm.pipe(TEXTS), fold0.pipe(TEXTS)):
        assert [(e.start, e.end, e.label_) for e in doc.spans["first_stage"]] == [
            (e.start, e.end, e.label_) for e in sm_doc.ents
        ]
        assert [(e.start, e.end, e.label_) for e in doc.spans["trained_stage"]] == [
            (e.start, e.end, e.label_) for e in fold_doc.ents
        ]
    assert ("John Smith", "PER") in {(ent.text, ent.label_) for ent in trained(TEXTS[0]).ents}


@pytest.fixture(scope="module")
def document_docbin(entity_docbin, tmp_path_factory) -> Path:
    """The fixture sentences as two documents of several sentences (the data's sentence starts)."""
    nlp = spacy.blank("en")
    sentences = list(DocBin().from_disk(entity_docbin).get_docs(nlp.vocab))
    documents = [Doc.from_docs(sentences[:2]), Doc.from_docs(sentences[2:] + sentences[:1])]
    assert [len(list(doc.sents)) for doc in documents] == [2, 2] and all(doc.ents for doc in documents)
    path = tmp_path_factory.mktemp("docbins") / "documents.spacy"
    DocBin(docs=documents).to_disk(path)
    return path


@needs_sm
@pytest.mark.parametrize(
    "config, first_stages",
    [
        ("own_data_two_stage_sentences.cfg", {"first_ner": "first_stage", "trained_ner": "trained_stage"}),
        ("own_data_two_stage_trained.cfg", {"trained_ner": "trained_stage"}),
        ("own_data_two_stage_shared.cfg", {"trained_ner": "trained_stage"}),
        (
            "own_data_two_stage_sentences_shared.cfg",
            {"first_ner": "first_stage", "trained_ner": "trained_stage"},
        ),
        ("own_data_two_stage_shared_window.cfg", {"trained_ner": "trained_stage"}),
        (
            "own_data_two_stage_sentences_shared_window.cfg",
            {"first_ner": "first_stage", "trained_ner": "trained_stage"},
        ),
    ],
)
def test_two_stage_sentences_from_a_users_docbin_in_the_three_documented_steps(
    document_docbin, tmp_path, config, first_stages
):
    """own_data_two_stage_sentences.cfg and own_data_two_stage_trained.cfg as their headers say:
    own_data_ner_sentences.cfg trained one sentence at a time and cross-validated on the user's
    documents (first-stage-folds, whose records are then predicted one sentence at a time), then the
    second stage over the first stages (both, or the trained one alone), each a sentence_ner: their
    entities are those of the ner run on each sentence alone."""
    from spacy_depner.readers.documents import read_first_stage
    from spacy_depner.workflows.first_stage_folds import write_first_stage_folds

    data = {"paths.train": str(document_docbin), "paths.dev": str(document_docbin), "paths.pretrained": str(SM)}
    short = {"training.max_steps": 2, "training.eval_frequency": 1}
    first = ROOT / "configs" / "own_data" / "own_data_ner_sentences.cfg"
    records_path = write_first_stage_folds(first, tmp_path / "folds", 2, {**data, **short})
    records = read_first_stage(records_path)
    documents = list(DocBin().from_disk(document_docbin).get_docs(spacy.blank("en").vocab))
    for document in documents:
        document.set_ents([], default="missing")  # the input: the words and sentence starts
    assert sorted(records) == [0, 1] and [records[i][1]["tokens"] for i in range(2)] == [len(d) for d in documents]
    for index, document in enumerate(documents):  # each document by the fold model that did not see it
        fold = spacy.load(tmp_path / "folds" / f"fold{index}" / "model-best")
        expected = [
            (e.start + sent.start, e.end + sent.start, e.label_)
            for sent in document.sents
            for e in fold(sent.as_doc()).ents
        ]
        assert [tuple(entity) for entity in records[index][1]["entities"]] == expected
    trained, sm = train_on_sm(
        config,
        "chain_ner",
        document_docbin,
        tmp_path,
        {
            "paths.trained_ner": str(tmp_path / "folds" / "fold0" / "model-best"),
            "paths.trained_stage_train": str(records_path),
        },
    )
    recognizers = [name for name, pipe in trained.pipeline if pipe.__class__.__name__ == "SentenceNER"]
    assert recognizers == list(first_stages)
    chain = trained.get_pipe("chain_ner").model
    assert {n.attrs["spans_key"] for n in chain.walk() if n.name == "nonlocal_features"} == set(first_stages.values())
    fold0 = spacy.load(tmp_path / "folds" / "fold0" / "model-best")
    assert parameters(trained.get_pipe("trained_ner").model) == parameters(fold0.get_pipe("ner").model)  # not trained
    if "_shared" in config:
        assert_chain_reads_the_frozen_tok2vec(trained, sm)
    text = " ".join(TEXTS)
    doc = trained(text)
    sentences = list(doc.sents)
    assert len(sentences) > 1
    sources = {"first_stage": sm, "trained_stage": fold0}
    for key, pipeline in ((key, sources[key]) for key in first_stages.values()):
        ner = pipeline.get_pipe("ner")  # each has a tok2vec of its own
        words = [Doc(ner.vocab, words=[t.text for t in s], spaces=[bool(t.whitespace_) for t in s]) for s in sentences]
        alone = [(e.start + s.start, e.end + s.start, e.label_) for s, w in zip(sentences, words) for e in ner(w).ents]
        assert [(e.start, e.end, e.label_) for e in doc.spans[key]] == alone, key
    assert ("John Smith", "PER") in {(ent.text, ent.label_) for ent in trained(TEXTS[0]).ents}
