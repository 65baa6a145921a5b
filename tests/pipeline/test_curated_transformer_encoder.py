"""Every component listening to a spacy-curated-transformers encoder (the
``curated_transformer`` of en_core_web_trf 3.8): the composed configs
configs/transformer/curated_<name>.cfg on a tiny randomly initialised curated
BERT (its sizes in the config, its WordPiece vocabulary a file written here
and read by spacy-curated-transformers.WordpieceLoader.v1: no download), its
window smaller than the Docs. The checks of the spacy-transformers encoder
(``encoder_checks``: the loss falls, batch sizes, save/load), and a component
sourced with ``replace_listeners`` from a pipeline with the shared curated
transformer predicts as it did there."""

import os
from pathlib import Path

import numpy as np
import pytest
from encoder_checks import (
    COMPONENTS,
    STRIDE,
    TINY_BERT,
    WINDOW,
    check_trains_round_trips_and_batches,
    examples_for,
    inputs,
    predictions,
    tiny_wordpiece_vocab,
    train,
)
from thinc.api import Config

pytest.importorskip(
    "spacy_curated_transformers",
    reason="spacy-curated-transformers is not installed: pip install 'spacy-depner[curated-transformers]'",
)

CONFIG_FOLDER = Path(__file__).resolve().parents[2] / "configs" / "transformer"
# spacy-curated-transformers 0.3 sums the transformer's loss with float() of a one-element array, which NumPy 2.4
# refuses (TypeError): fine-tuning it needs numpy<2.4, as the curated-transformers extra pins
fine_tunes = pytest.mark.xfail(
    tuple(map(int, np.__version__.split(".")[:2])) >= (2, 4),
    raises=TypeError,
    strict=True,
    reason="spacy-curated-transformers 0.3 does not fine-tune on NumPy >= 2.4",
)


@pytest.fixture(scope="module")
def wordpiece_vocab(tmp_path_factory) -> Path:
    """The tiny WordPiece vocabulary (``tiny_wordpiece_vocab``) as a vocab.txt."""
    path = tmp_path_factory.mktemp("tiny_curated_bert") / "vocab.txt"
    path.write_text("\n".join(tiny_wordpiece_vocab()) + "\n", encoding="utf8")
    return path


def curated_pipeline(config_name: str, vocab: Path):
    """The pipeline of configs/transformer/curated_CONFIG_NAME.cfg on a tiny
    BERT (TINY_BERT's sizes, random weights, seeded): no encoder loader, the
    word pieces read from ``vocab``, the window WINDOW word pieces."""
    from spacy.util import fix_random_seed, load_model_from_config

    fix_random_seed(0)
    config = Config().from_disk(CONFIG_FOLDER / f"curated_{config_name}.cfg", interpolate=False)
    model = config["components"]["transformer"]["model"]
    model.update(
        {
            **TINY_BERT,
            "vocab_size": len(tiny_wordpiece_vocab()),
            "model_max_length": TINY_BERT["max_position_embeddings"],
        }
    )
    model["with_spans"].update({"window": WINDOW, "stride": STRIDE})
    config["initialize"]["components"]["transformer"] = {
        "piecer_loader": {
            "@model_loaders": "spacy-curated-transformers.WordpieceLoader.v1",
            "path": str(vocab),
            "lowercase": True,
        }
    }
    config["nlp"]["tokenizer"] = {"@tokenizers": "spacy.Tokenizer.v1"}
    return load_model_from_config(config.interpolate(), auto_fill=True, validate=True)


def test_each_component_listens_to_the_configs_curated_transformer_and_predicts(wordpiece_vocab):
    """On any NumPy: only fine-tuning needs numpy<2.4."""
    for config_name, component, key in COMPONENTS:
        nlp = curated_pipeline(config_name, wordpiece_vocab)
        listener = nlp.get_pipe(component).model.get_ref("tok2vec")
        assert listener.name == "last_transformer_layer_listener"
        assert nlp.get_pipe("transformer").listening_components == [component]
        assert listener.get_dim("nO") == TINY_BERT["hidden_width"]
        examples = examples_for(nlp, key)
        nlp.initialize(lambda: examples)
        docs = list(nlp.pipe(inputs(nlp.vocab, examples), batch_size=4))
        group = component if key == "ents" else key
        assert all(len(doc.spans[group].attrs["scores"]) == len(doc.spans[group]) for doc in docs)
        assert all(doc._.trf_data.last_layer_only for doc in docs)  # what the transformer gave its listener


# not on thinc's base Ops: spacy-curated-transformers converts the torch outputs with thinc's torch2xp and the
# model's ops, which takes any ops but NumpyOps for cupy's
@fine_tunes
@pytest.mark.parametrize("device", ["cpu", "gpu"], indirect=True)
@pytest.mark.parametrize("config_name,component,key", COMPONENTS)
def test_trains_round_trips_and_batches_on_a_curated_transformer(
    config_name, component, key, wordpiece_vocab, device, tmp_path
):
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes(wordpiece_vocab.read_bytes())
    # the saved pipeline carries its own piece encoder: the vocabulary file is deleted before loading it
    check_trains_round_trips_and_batches(
        curated_pipeline(config_name, vocab),
        component,
        key,
        device,
        tmp_path / "pipeline",
        forget=lambda: os.remove(vocab),
    )


@fine_tunes
@pytest.mark.parametrize("config_name,component,key", COMPONENTS)
def test_a_component_sourced_with_replaced_listeners_predicts_as_in_its_pipeline(
    config_name, component, key, wordpiece_vocab, tmp_path
):
    """``replace_listeners = ["model.tok2vec"]``: the sourced component gets
    its own copy of the shared curated transformer, and its spans and scores
    are those of the pipeline it came from, also once saved and loaded."""
    import spacy
    from spacy.util import load_model_from_config

    shared = curated_pipeline(config_name, wordpiece_vocab)
    examples, _ = train(shared, component, key)
    shared.to_disk(tmp_path / "shared")
    config = Config().from_str(f"""
        [nlp]
        lang = "en"
        pipeline = ["{component}"]

        [components]

        [components.{component}]
        source = "{tmp_path / "shared"}"
        replace_listeners = ["model.tok2vec"]
        """)
    alone = load_model_from_config(config, auto_fill=True, validate=True)
    assert alone.pipe_names == [component]
    assert alone.get_pipe(component).model.get_ref("tok2vec").name == "wrapped_transformer_and_listener"
    alone.to_disk(tmp_path / "alone")
    group = component if key == "ents" else key
    expected = list(shared.pipe(inputs(shared.vocab, examples)))
    assert any(predictions(expected, key))  # it found spans: the comparison is not of empty lists
    for nlp in (alone, spacy.load(tmp_path / "alone")):
        found = list(nlp.pipe(inputs(nlp.vocab, examples), batch_size=4))
        assert predictions(found, key) == predictions(expected, key)
        for then, now in zip(expected, found, strict=True):
            assert np.allclose(then.spans[group].attrs["scores"], now.spans[group].attrs["scores"], atol=1e-5)
