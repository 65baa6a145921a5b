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
from spacy.tokens import Doc, Span
from spacy.training import Example
from thinc.api import Adam, Config, NumpyOps, Ops, set_current_ops

from test_own_data_recipe import SM, TEXTS, loss_per_step, training_overrides
from test_own_data_recipe import entity_docbin  # noqa: F401  (the fixture: the tiny corpus as a DocBin without trees)
from tiny_corpus import TINY

pytest.importorskip("spacy_transformers", reason="spacy-transformers is not installed: pip install 'spacy-depner[transformers]'")
torch = pytest.importorskip("torch", reason="torch is not installed: pip install 'spacy-depner[transformers]'")
transformers = pytest.importorskip("transformers", reason="transformers is not installed: pip install 'spacy-depner[transformers]'")

CONFIG_FOLDER = Path(__file__).resolve().parents[2] / "configs" / "transformer"
NESTED = [  # words, mentions (start, end exclusive, label)
    ("the University of Paris hospital was built in Paris".split(), [(1, 4, "ORG"), (3, 4, "LOC"), (0, 5, "FAC"),
                                                                     (8, 9, "LOC")]),
    ("Mary saw the Bank of England near Paris today".split(), [(0, 1, "PER"), (3, 6, "ORG"), (5, 6, "LOC"),
                                                               (7, 8, "LOC")]),
    ("Paris is big and Mary likes it".split(), [(0, 1, "LOC"), (4, 5, "PER")]),
]
# (config of configs/transformer, the component, where it writes: "ents" or a span key)
COMPONENTS = [("dgm_ewt", "dgm_ner", "ents"), ("chain_crf_ewt", "chain_ner", "ents"),
              ("genia_nested", "nested_ner", "nested_ner"), ("genia_hypergraph", "hypergraph_ner", "nested_ner")]
WINDOW, STRIDE = 8, 6  # word pieces: every Doc here is longer


def _gpu_reason():
    from thinc.util import has_cupy_gpu

    return None if has_cupy_gpu and torch.cuda.is_available() else "no GPU here (thinc finds no CUDA device with cupy)"


@pytest.fixture(params=["cpu", "ops", "gpu"])
def device(request):
    """cpu: NumpyOps (numba kernels); ops: thinc's base Ops, the array code a
    GPU runs, here on numpy arrays; gpu: CupyOps, where there is a GPU."""
    if request.param == "ops":
        set_current_ops(Ops())
    if request.param == "gpu":
        reason = _gpu_reason()
        if reason:
            pytest.skip(reason)
        from thinc.api import require_gpu

        require_gpu()
    yield request.param
    set_current_ops(NumpyOps())


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    """A 1-layer, 16-wide BERT with random weights and a WordPiece vocabulary
    of letters, digits, punctuation and a few words (so every text splits)."""
    folder = tmp_path_factory.mktemp("tiny_bert")
    chars = list("abcdefghijklmnopqrstuvwxyz0123456789") + list(".,;:!?'\"()-&/")
    words = sorted({word.lower() for row in TINY for word in row[0]} | {"paris", "mary", "the", "of"})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + [f"##{c}" for c in chars] + \
        [word for word in words if word not in chars]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf8")
    transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True).save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=64)
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


def examples_for(nlp, key: str):
    if key == "ents":
        return [Example(Doc(nlp.vocab, words=words, heads=heads, deps=deps),
                        Doc(nlp.vocab, words=words, heads=heads, deps=deps, ents=ents)) for words, heads, deps, ents in TINY]
    examples = []
    for words, found in NESTED:
        reference = Doc(nlp.vocab, words=words)
        reference.spans[key] = [Span(reference, s, e, label=label) for s, e, label in found]
        examples.append(Example(Doc(nlp.vocab, words=words), reference))
    return examples


def predictions(docs, key: str):
    if key == "ents":
        return [[(e.start, e.end, e.label_) for e in doc.ents] for doc in docs]
    return [sorted((s.start, s.end, s.label_) for s in doc.spans[key]) for doc in docs]


def trained(config_name: str, component: str, key: str, bert, steps: int = 12):
    nlp = pipeline_on(config_name, bert)
    examples = examples_for(nlp, key)
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.003)
    losses = [nlp.update(examples, sgd=optimizer, losses={})[component] for _ in range(steps)]
    return nlp, examples, losses


@pytest.mark.parametrize("config_name,component,key", COMPONENTS)
def test_trains_round_trips_and_batches_on_a_transformer(config_name, component, key, tiny_bert, device, tmp_path):
    bert = tmp_path / "bert"
    shutil.copytree(tiny_bert, bert)
    nlp, examples, losses = trained(config_name, component, key, bert)
    assert np.isfinite(losses).all()
    assert np.mean(losses[-3:]) < 0.7 * np.mean(losses[:3]), losses
    assert nlp.pipe_names[0] == "transformer"
    assert type(nlp.get_pipe(component).model.ops).__name__ == {"cpu": "NumpyOps", "ops": "Ops", "gpu": "CupyOps"}[device]

    def inputs(vocab):  # fresh Docs (with their trees: DGM reads them), three of each
        return [Doc(vocab).from_bytes(eg.x.to_bytes()) for _ in range(3) for eg in examples]

    first = list(nlp.pipe(inputs(nlp.vocab), batch_size=1))
    gold = predictions([eg.reference for eg in examples], key) * 3
    found = sum(len(set(p) & set(g)) for p, g in zip(predictions(first, key), gold))
    assert found >= 0.5 * sum(map(len, gold))  # it learnt the tiny corpus (so the checks below are not vacuous)
    for batch_size in (2, 7):
        assert predictions(nlp.pipe(inputs(nlp.vocab), batch_size=batch_size), key) == predictions(first, key)

    nlp.to_disk(tmp_path / "pipeline")
    shutil.rmtree(bert)  # the saved pipeline carries its own copy of the transformer
    import spacy

    loaded = spacy.load(tmp_path / "pipeline")
    again = list(loaded.pipe(inputs(loaded.vocab), batch_size=4))
    assert predictions(again, key) == predictions(first, key)
    group = component if key == "ents" else key  # the span group with the scores: the entities' or the mentions'
    for then, now in zip(first, again, strict=True):
        assert np.allclose(then.spans[group].attrs["scores"], now.spans[group].attrs["scores"], atol=1e-5)


def test_every_token_of_a_doc_longer_than_the_window_gets_a_vector(tiny_bert, device):
    nlp, _, _ = trained("chain_crf_ewt", "chain_ner", "ents", tiny_bert, steps=1)
    words = ("Mary saw the Bank of England near Paris and then Lee Ann Womack won Single of the Year award " * 4).split()
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
    """`spacy train configs/transformer/own_data_dgm.cfg` with the real en_core_web_sm and the tiny BERT."""
    import spacy
    from spacy.cli.train import train

    if not (SM / "config.cfg").is_file():
        pytest.skip(f"no en_core_web_sm at {SM} (set DEPNER_DATA to the data folder that has models/)")
    docbin = request.getfixturevalue("entity_docbin")
    train(CONFIG_FOLDER / "own_data_dgm.cfg", tmp_path / "out", overrides={
        "paths.train": str(docbin), "paths.dev": str(docbin), "paths.pretrained": str(SM),
        "paths.transformer": str(tiny_bert), "training.optimizer.learn_rate.initial_rate": 0.003,
        "training.optimizer.learn_rate.warmup_steps": 2, **training_overrides(tmp_path / "log.jsonl", 40, 20)})
    (_, first), *_, (_, last) = loss_per_step(tmp_path / "log.jsonl", "dgm_ner")
    assert last < first / 2
    trained, sm = spacy.load(tmp_path / "out" / "model-last"), spacy.load(SM)
    assert trained.pipe_names == ["parser", "transformer", "dgm_ner"]
    for doc, sm_doc in zip(trained.pipe(TEXTS), sm.pipe(TEXTS)):  # the released parser's trees, untouched
        assert [(t.head.i, t.dep_) for t in doc] == [(t.head.i, t.dep_) for t in sm_doc]
