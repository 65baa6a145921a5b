"""The models and data files of the DGM study (Jie, Muis & Lu 2017) on UD
English-EWT r2.9 + UNER English-EWT, and their twins trained on predicted
(jackknifed) trees.

Which models read trees. The corpus reader gives every model's training
Docs the training file's trees, but only two settings read them: a lattice
built from the trees (``dgm_suggester`` and ``dgm_s_suggester``: the DGM and
DGM-S families) and ``dependency_features = true`` (each head's and
dependency label's embedding: the +dep variant of every family). The shared
tok2vec embeds NORM, PREFIX, SUFFIX and SHAPE only; the chain models' tags,
the semi-Markov lattice (every span up to 8 words) and spaCy's ner read no
tree. So a model is trained on other trees only if it is a DGM or DGM-S
model or has dependency features (``StudyModel.reads_trees``); the others
would train exactly as they do on the gold trees.

The pretrained arms. A spaCy user adds an entity model to a pretrained
pipeline (``--pretrained-pipeline``, e.g. en_core_web_sm): every model of the
study also has NAME@pretrained, trained with that pipeline's parser sourced,
frozen and annotating (it trains and is tested on the trees that parser
gives), with the study's own CNN tok2vec and the pipeline's vocab; and
NAME@pretrained-tok2vec, the same with the pipeline's tok2vec sourced and
fine-tuned in place of the study's own (``pretrained.py``). spaCy's ner is
among them, so each arm has its reference on the same encoder.
"""

from pathlib import Path
from typing import List, NamedTuple, Optional, Sequence

from ..kit.seeds import pick_names

SPLITS = ("train", "dev", "test")
TREE_LATTICES = ("dgm_s", "dgm")  # the lattices built from the trees
JACKKNIFE = "@jackknife"  # the name suffix (and folder) of a model trained on the jackknifed trees
PRETRAINED_ARMS = {"parser": "@pretrained", "tok2vec": "@pretrained-tok2vec"}  # StudyModel.pretrained: name suffix


class StudyModel(NamedTuple):
    name: str
    config: str
    component: str
    dependency_features: Optional[bool]  # None: the model has no such setting
    lattice: Optional[str]  # its key in the coverage report, None for tag-based models
    jackknife: bool = False  # trained on the jackknifed (predicted) trees of the training split
    pretrained: str = ""  # "parser": the pretrained pipeline's trees; "tok2vec": its trees and its tok2vec; "": neither

    @property
    def reads_trees(self) -> bool:
        """Whether training reads the trees: a lattice from the trees, or dependency features."""
        return bool(self.dependency_features) or self.lattice in TREE_LATTICES

    def overrides(self, jackknife: Optional[Path] = None) -> List[str]:
        """The ``spacy train`` overrides of this model: dependency features
        on for a +dep model; the training trees from ``jackknife`` (the
        train.jackknife.conllu of ``jackknife-trees``, with the entities of
        the same sentences beside it, train.jackknife.iob2) for a twin."""
        overrides = (
            [f"--components.{self.component}.model.dependency_features", "true"] if self.dependency_features else []
        )
        if self.jackknife:
            if jackknife is None:
                raise ValueError(
                    f"{self.name} trains on the jackknifed trees: give their CoNLL-U file "
                    "(python -m experiments jackknife-trees writes OUTPUT/train.jackknife.conllu)"
                )
            overrides += [
                "--paths.train_conllu",
                str(jackknife),
                "--paths.train_iob2",
                str(Path(jackknife).with_suffix(".iob2")),
            ]
        return overrides


FAMILIES = [
    ("linear-chain CRF", "chain_crf", "chain_crf_ewt.cfg", "chain_ner", None),
    ("averaged perceptron", "perceptron", "chain_perceptron_ewt.cfg", "chain_ner", None),
    ("semi-Markov CRF (L=8)", "semi_crf", "semi_markov_ewt.cfg", "dgm_ner", "semi_markov_L8"),
    ("DGM-S", "dgm_s", "dgm_s_ewt.cfg", "dgm_ner", "dgm_s"),
    ("DGM", "dgm", "dgm_ewt.cfg", "dgm_ner", "dgm"),
]
TITLES = {key: title for title, key, *_ in FAMILIES}
TITLES["ner"] = "spaCy ner (reference)"
MODELS = [
    StudyModel(key + ("+dep" if dep else ""), config, component, dep, lattice)
    for _, key, config, component, lattice in FAMILIES
    for dep in (False, True)
] + [StudyModel("ner", "ner_ewt.cfg", "ner", None, None)]
TREE_READERS = [model.name for model in MODELS if model.reads_trees]
TWINS = [model._replace(name=model.name + JACKKNIFE, jackknife=True) for model in MODELS if model.reads_trees]
PRETRAINED_MODELS = [
    model._replace(name=model.name + suffix, pretrained=arm)
    for arm, suffix in PRETRAINED_ARMS.items()
    for model in MODELS
]
BY_NAME = {model.name: model for model in MODELS + TWINS + PRETRAINED_MODELS}  # every model the study knows


def gold_trained(name: str) -> str:
    """The name of the model trained on the gold trees that ``name`` is a
    variant of (``dgm@jackknife`` -> ``dgm``, ``ner@pretrained-tok2vec`` -> ``ner``)."""
    return name.split("@")[0]


def twin_names(chosen: Optional[str] = "all") -> List[str]:
    """The models to train on the jackknifed trees too: ``"all"`` (every
    tree-reading model) or names separated by commas, e.g. "dgm+dep,chain_crf+dep"."""
    if chosen is None or chosen.strip() == "all":
        return list(TREE_READERS)
    names = pick_names(chosen, [model.name for model in MODELS], "--jackknife-models")
    for name in names:
        if name not in TREE_READERS:
            raise ValueError(
                f"--jackknife-models: {name} reads no tree in training, so trained on the jackknifed trees "
                f"it would be the same model; give some of {', '.join(TREE_READERS)}, or all"
            )
    return names


def model_names(chosen: Optional[str] = "all") -> List[str]:
    """The models to train (on gold trees, or in a pretrained arm): ``"all"``
    (every model trained on gold trees) or names separated by commas, e.g.
    "ner,chain_crf,dgm+dep,dgm+dep@pretrained", in the order of MODELS + PRETRAINED_MODELS."""
    if chosen is None or chosen.strip() == "all":
        return [model.name for model in MODELS]
    return pick_names(chosen, [model.name for model in MODELS + PRETRAINED_MODELS])


def study_models(twins: Sequence[str] = (), chosen: Optional[Sequence[str]] = None) -> List[StudyModel]:
    """The models of the study named in ``chosen`` (``model_names``; None:
    every one), then the twins (NAME@jackknife, trained on the jackknifed
    trees) of the models named in ``twins`` (``twin_names``), in the order
    of MODELS. A twin needs its gold-trained model among the chosen ones,
    since the study compares the two: otherwise a ValueError."""
    chosen = [model.name for model in MODELS] if chosen is None else list(chosen)
    lonely = [name for name in twins if name not in chosen]
    if lonely:
        raise ValueError(
            f"--jackknife-models {','.join(lonely)}: the study compares each twin with the same model trained "
            f"on gold trees, so add {','.join(lonely)} to --models too"
        )
    return (
        [model for model in MODELS if model.name in chosen]
        + [model for model in TWINS if gold_trained(model.name) in twins]
        + [model for model in PRETRAINED_MODELS if model.name in chosen]
    )
