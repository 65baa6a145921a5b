"""The DGM study's pretrained arms (NAME@pretrained, NAME@pretrained-tok2vec)
with the real en_core_web_sm of the data folder: the configs they train
with, the input Docs its parser annotates (one sentence each, as in the
data), and its own ner scored with its types mapped. Skipped, saying why,
where the data folder has no en_core_web_sm."""

import os
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from spacy.util import load_config, load_model_from_config

from experiments.configs.pretrained import pretrained_config
from experiments.dgm.models import MODELS, PRETRAINED_MODELS, model_names, study_models
from experiments.dgm.pretrained_ner import MappedEntities
from experiments.dgm.study import training_runs
from spacy_depner.readers.conllu import read_conllu, sentences_to_doc

ROOT = Path(__file__).parents[2]
DATA = Path(os.environ.get("DEPNER_DATA", "/work/shared/data"))
SM = DATA / "models" / "en_core_web_sm-3.8.0"
needs_sm = pytest.mark.skipif(
    not (SM / "config.cfg").is_file(),
    reason=f"no en_core_web_sm at {SM} (set DEPNER_DATA to the data folder that has models/)",
)


def test_every_model_has_both_pretrained_arms_and_they_are_chosen_by_name():
    names = [m.name for m in PRETRAINED_MODELS]
    assert names == [m.name + "@pretrained" for m in MODELS] + [m.name + "@pretrained-tok2vec" for m in MODELS]
    assert model_names("all") == [m.name for m in MODELS]  # "all" stays the study's own models
    chosen = study_models((), model_names("ner,dgm+dep@pretrained,ner@pretrained-tok2vec"))
    assert [(m.name, m.pretrained, m.config) for m in chosen] == [
        ("ner", "", "ner_ewt.cfg"),
        ("dgm+dep@pretrained", "parser", "dgm_ewt.cfg"),
        ("ner@pretrained-tok2vec", "tok2vec", "ner_ewt.cfg"),
    ]


@needs_sm
@pytest.mark.parametrize("tok2vec", [False, True], ids=["own tok2vec", "pretrained tok2vec"])
def test_the_pretrained_config_sources_a_frozen_annotating_parser(tok2vec):
    config = pretrained_config(ROOT / "configs" / "dgm_ewt.cfg", str(SM), tok2vec)
    assert config["nlp"]["pipeline"] == ["parser", "tok2vec", "dgm_ner"]
    config = config.interpolate()
    assert config["components"]["parser"] == {"source": str(SM), "replace_listeners": ["model.tok2vec"]}
    assert config["training"]["frozen_components"] == ["parser"] == config["training"]["annotating_components"]
    assert config["paths"]["dependencies"] == "predicted"
    assert config["initialize"]["before_init"]["vocab"] == str(SM)
    own = load_config(ROOT / "configs" / "dgm_ewt.cfg")
    assert config["components"]["dgm_ner"]["suggester"] == own["components"]["dgm_ner"]["suggester"]
    assert config["training"]["optimizer"] == own["training"]["optimizer"]  # the one recipe
    nlp = load_model_from_config(config, auto_fill=True)
    sm = spacy.load(SM)
    if tok2vec:
        assert config["components"]["tok2vec"] == {"source": str(SM), "model": {"encode": {"width": 96}}}
        assert nlp.get_pipe("tok2vec").model.to_bytes() == sm.get_pipe("tok2vec").model.to_bytes()
    else:
        assert nlp.get_pipe("tok2vec").model.get_dim("nO") == own["components"]["tok2vec"]["model"]["encode"]["width"]
    # the parser holds its own copy of en_core_web_sm's tok2vec: it predicts as the released pipeline does
    words = "Maria Garcia moved from Madrid to the Boston office of Acme Corp. last year".split()
    ours = nlp.get_pipe("parser")(Doc(nlp.vocab, words=words))
    theirs = sm(Doc(sm.vocab, words=words))
    assert [t.head.i for t in ours] == [t.head.i for t in theirs]


@needs_sm
def test_training_runs_write_the_arm_configs(tmp_path):
    chosen = study_models((), model_names("dgm+dep@pretrained"))
    runs = training_runs(chosen, 0, DATA, tmp_path, ROOT / "configs", 10, 10, 0, None, Path("weights.bin"), str(SM))
    command = runs["dgm+dep@pretrained"]
    assert command[command.index("train") + 1] == str(tmp_path / "configs" / "dgm+dep@pretrained.cfg")
    assert "--components.dgm_ner.model.dependency_features" in command and "--paths.init_tok2vec" in command
    written = load_config(tmp_path / "configs" / "dgm+dep@pretrained.cfg", interpolate=True)
    assert written["components"]["parser"]["source"] == str(SM)
    tok2vec_arm = training_runs(
        study_models((), ["ner@pretrained-tok2vec"]),
        0,
        DATA,
        tmp_path,
        ROOT / "configs",
        10,
        10,
        0,
        None,
        Path("weights.bin"),
        str(SM),
    )["ner@pretrained-tok2vec"]
    assert "--paths.init_tok2vec" not in tok2vec_arm  # its tok2vec is the pretrained pipeline's


@needs_sm
def test_training_runs_on_a_transformer_write_its_configs(tmp_path):
    chosen = study_models((), model_names("dgm+dep@pretrained,ner"))
    runs = training_runs(
        chosen,
        0,
        DATA,
        tmp_path,
        ROOT / "configs",
        10,
        10,
        0,
        None,
        Path("weights.bin"),
        str(SM),
        transformer="bert-folder",
    )
    for name in ("dgm+dep@pretrained", "ner"):
        assert "--paths.init_tok2vec" not in runs[name]  # the tok2vec weights are not the transformer's
        written = load_config(tmp_path / "configs" / f"{name}.cfg", interpolate=True)
        assert written["components"]["transformer"]["model"]["name"] == "bert-folder"
        assert "tok2vec" not in written["nlp"]["pipeline"]
    assert load_config(tmp_path / "configs" / "dgm+dep@pretrained.cfg")["nlp"]["pipeline"] == [
        "parser",
        "transformer",
        "dgm_ner",
    ]
    with pytest.raises(ValueError, match="cannot be trained on a transformer"):
        training_runs(
            study_models((), ["ner@pretrained-tok2vec"]),
            0,
            DATA,
            tmp_path,
            ROOT / "configs",
            10,
            10,
            0,
            None,
            None,
            str(SM),
            transformer="bert-folder",
        )


@needs_sm
def test_the_pretrained_parser_keeps_the_datas_sentences():
    """Input Docs without trees mark every token that starts no sentence, so
    the parser gives one tree per sentence of the data, also where the data's
    sentences share a Doc."""
    sm = spacy.load(SM, exclude=["ner", "lemmatizer"])
    sentences = list(read_conllu(ROOT / "tests" / "data" / "tiny.conllu"))
    marked = [sm(sentences_to_doc(sm.vocab, [s], with_trees=False)) for s in sentences]
    assert all(len(list(doc.sents)) == 1 for doc in marked)
    two = sm(sentences_to_doc(sm.vocab, sentences[:2], with_trees=False))
    assert [s.start for s in two.sents] == [0, len(sentences[0].words)]


def test_mapped_entities_relabel_and_drop():
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(
        [
            {"label": "PERSON", "pattern": "Maria"},
            {"label": "NORP", "pattern": "Spanish"},
            {"label": "GPE", "pattern": "Madrid"},
            {"label": "FAC", "pattern": "Heathrow"},
        ]
    )
    doc = next(MappedEntities(nlp).pipe([nlp.make_doc("Maria , a Spanish nurse , flew from Madrid to Heathrow")]))
    assert [(e.text, e.label_) for e in doc.ents] == [("Maria", "PER"), ("Madrid", "LOC"), ("Heathrow", "LOC")]


@needs_sm
def test_a_pipeline_that_parses_is_scored_on_its_own_trees():
    from spacy_depner.evaluation.corpus_scores import evaluate_pipeline

    data = ROOT / "tests" / "data"
    result = evaluate_pipeline(SM, data / "tiny.conllu", data / "tiny.iob2")
    assert result["trees"] == "the pipeline's parser" and result["words"] > 0
    with pytest.raises(ValueError, match="has its own parser"):
        evaluate_pipeline(SM, data / "tiny.conllu", data / "tiny.iob2", parser=SM)


def test_a_pretrained_arm_without_its_pipeline_is_refused(tmp_path):
    from experiments.configs.pretrained import model_config

    assert (
        model_config(ROOT / "configs", "dgm_ewt.cfg", tmp_path, "dgm", False, None) == ROOT / "configs" / "dgm_ewt.cfg"
    )
    with pytest.raises(ValueError, match="give it with --pretrained-pipeline"):
        model_config(ROOT / "configs", "dgm_ewt.cfg", tmp_path, "dgm@pretrained", True, None)


def test_the_nested_studys_all_leaves_the_pretrained_models_to_be_named():
    from experiments.nested.models import MODELS as NESTED
    from experiments.nested.models import model_names as nested_names

    pretrained = [m.name for m in NESTED if m.pretrained]
    assert nested_names("all") == [m.name for m in NESTED if not m.pretrained] and not set(pretrained) & set(
        nested_names("all")
    )
    assert nested_names("gum_cyk,gum_quadratic_dgm@pretrained") == ["gum_cyk", "gum_quadratic_dgm@pretrained"]
    assert pretrained == [
        "gum_quadratic_dgm@pretrained",
        "gum_quadratic_dgm+dep@pretrained",
        "gum_hypergraph_heads+dep@pretrained",
    ]
    by_name = {m.name: m for m in NESTED}
    assert by_name["gum_quadratic_dgm@pretrained"].overrides == by_name["gum_quadratic_dgm"].overrides
    assert (
        "--components.hypergraph_ner.model.dependency_features"
        in by_name["gum_hypergraph_heads+dep@pretrained"].overrides
    )


@needs_sm
def test_gum_coverage_reads_a_parsers_trees():
    from spacy_depner.evaluation.nested_coverage import coverage_main, nested_coverage_report
    from spacy_depner.readers.gum import read_gum_corpus

    path = ROOT / "tests" / "data" / "nested_gum.conllu"
    sentences = [s for d in read_gum_corpus(path).documents for s in d]
    sm = spacy.load(SM)
    docs = [
        sm(Doc(sm.vocab, words=s.sentence.words, sent_starts=[i == 0 for i in range(len(s.sentence.words))]))
        for s in sentences
    ]
    heads = [[-1 if t.head.i == t.i else t.head.i for t in doc] for doc in docs]
    assert heads != [s.sentence.heads for s in sentences]  # the parser's trees are not the gold ones
    expected = nested_coverage_report(
        [s.sentence.words for s in sentences], [s.mentions for s in sentences], heads=heads
    )
    parsed, gold = coverage_main(gum=path, parser=SM), coverage_main(gum=path)
    assert (parsed["trees"], gold["trees"]) == (str(SM), "given")
    assert parsed["coverage"]["dgm"] == expected["coverage"]["dgm"]
    assert parsed["spans_per_token"]["dgm"] == expected["spans_per_token"]["dgm"]
    with pytest.raises(ValueError, match="GENIA"):
        coverage_main(jsonl=ROOT / "tests" / "data" / "nested_genia.jsonl", parser=SM)
