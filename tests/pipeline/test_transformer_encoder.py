"""Every component on a transformer encoder: the composed configs of
configs/transformer/ run on a tiny randomly initialised BERT made here (no
download), its window smaller than the Docs (strided spans). Training lowers
the loss; save/load round-trips to the same predictions; ``nlp.pipe`` gives
the same spans whatever the batch size; every token of a Doc longer than the
window gets a vector. On the CPU, and on a GPU where there is one (the
dynamic programs stay on the CPU)."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from encoder_checks import (
    COMPONENTS,
    STRIDE,
    TINY_BERT,
    WINDOW,
    check_trains_round_trips_and_batches,
    tiny_wordpiece_vocab,
    train,
)
from spacy.tokens import Doc
from test_own_data_recipe import (
    SM,
    TEXTS,
    entity_docbin,  # noqa: F401  (the fixture: the tiny corpus as a DocBin without trees)
    loss_per_step,
    training_overrides,
)
from thinc.api import Config

pytest.importorskip(
    "spacy_transformers", reason="spacy-transformers is not installed: pip install 'spacy-depner[transformers]'"
)
torch = pytest.importorskip("torch", reason="torch is not installed: pip install 'spacy-depner[transformers]'")
transformers = pytest.importorskip(
    "transformers", reason="transformers is not installed: pip install 'spacy-depner[transformers]'"
)

CONFIG_FOLDER = Path(__file__).resolve().parents[2] / "configs" / "transformer"


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A 1-layer, 16-wide BERT with random weights and the tiny WordPiece
    vocabulary (``tiny_wordpiece_vocab``)."""
    folder = tmp_path_factory.mktemp("tiny_bert")
    vocab = tiny_wordpiece_vocab()
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf8")
    transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True).save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(vocab),
        hidden_size=TINY_BERT["hidden_width"],
        num_hidden_layers=TINY_BERT["num_hidden_layers"],
        num_attention_heads=TINY_BERT["num_attention_heads"],
        intermediate_size=TINY_BERT["intermediate_width"],
        max_position_embeddings=TINY_BERT["max_position_embeddings"],
    )
    transformers.BertModel(config).save_pretrained(folder)
    return folder


def pipeline_on(config_name: str, bert):
    """The pipeline of configs/transformer/CONFIG_NAME.cfg on the BERT folder
    ``bert``, its window WINDOW word pieces, seeded."""
    from spacy.util import fix_random_seed, load_model_from_config

    fix_random_seed(0)
    config = Config().from_disk(CONFIG_FOLDER / f"{config_name}.cfg", interpolate=False)
    config["paths"]["transformer"] = str(bert)
    config["components"]["transformer"]["model"]["get_spans"].update({"window": WINDOW, "stride": STRIDE})
    config["nlp"]["tokenizer"] = {"@tokenizers": "spacy.Tokenizer.v1"}
    return load_model_from_config(config.interpolate(), auto_fill=True, validate=True)


def trained(config_name: str, component: str, key: str, bert, steps: int = 12):
    nlp = pipeline_on(config_name, bert)
    examples, losses = train(nlp, component, key, steps)
    return nlp, examples, losses


@pytest.mark.parametrize("config_name,component,key", COMPONENTS)
def test_trains_round_trips_and_batches_on_a_transformer(config_name, component, key, tiny_bert, device, tmp_path):
    bert = tmp_path / "bert"
    shutil.copytree(tiny_bert, bert)
    # the saved pipeline carries its own copy of the transformer: the BERT folder is deleted before loading it
    check_trains_round_trips_and_batches(
        pipeline_on(config_name, bert),
        component,
        key,
        device,
        tmp_path / "pipeline",
        forget=lambda: shutil.rmtree(bert),
    )


def test_every_token_of_a_doc_longer_than_the_window_gets_a_vector(tiny_bert, device):
    nlp, _, _ = trained("chain_crf_ewt", "chain_ner", "ents", tiny_bert, steps=1)
    words = (
        "Mary saw the Bank of England near Paris and then Lee Ann Womack won Single of the Year award " * 4
    ).split()
    doc = nlp.get_pipe("transformer")(Doc(nlp.vocab, words=words))
    listener = nlp.get_pipe("chain_ner").model.get_ref("tok2vec")
    vectors = listener.ops.to_numpy(listener.predict([doc])[0])
    assert vectors.shape[0] == len(words)
    assert np.isfinite(vectors).all()
    assert (np.abs(vectors).sum(axis=1) > 0).all()
    tagged = nlp(" ".join(words))
    assert len(tagged) == len(words)


@pytest.mark.slow
def test_the_readmes_transformer_command_trains_dgm_ner_in_en_core_web_sm(request, tiny_bert, tmp_path):
    """`spacy train configs/own_data/transformer/own_data_dgm.cfg` with the real en_core_web_sm and the tiny BERT."""
    import spacy
    from spacy.cli.train import train

    if not (SM / "config.cfg").is_file():
        pytest.skip(f"no en_core_web_sm at {SM} (set DEPNER_DATA to the data folder that has models/)")
    docbin = request.getfixturevalue("entity_docbin")
    train(
        CONFIG_FOLDER.parent / "own_data" / "transformer" / "own_data_dgm.cfg",
        tmp_path / "out",
        overrides={
            "paths.train": str(docbin),
            "paths.dev": str(docbin),
            "paths.pretrained": str(SM),
            "paths.transformer": str(tiny_bert),
            "training.optimizer.learn_rate.initial_rate": 0.003,
            "training.optimizer.learn_rate.warmup_steps": 2,
            **training_overrides(tmp_path / "log.jsonl", 40, 20),
        },
    )
    (_, first), *_, (_, last) = loss_per_step(tmp_path / "log.jsonl", "dgm_ner")
    assert last < first / 2
    trained, sm = spacy.load(tmp_path / "out" / "model-last"), spacy.load(SM)
    assert trained.pipe_names == ["parser", "transformer", "dgm_ner"]
    for doc, sm_doc in zip(trained.pipe(TEXTS), sm.pipe(TEXTS)):  # the released parser's trees, untouched
        assert [(t.head.i, t.dep_) for t in doc] == [(t.head.i, t.dep_) for t in sm_doc]
