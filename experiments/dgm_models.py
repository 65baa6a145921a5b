"""The models and data files of the DGM study (Jie, Muis & Lu 2017) on UD
English-EWT r2.9 + UNER English-EWT."""
from pathlib import Path
from typing import NamedTuple, Optional

CONLLU = "ud_ewt/r2.9/en_ewt-ud-{split}.conllu"
IOB2 = {"train": "uner_ewt/en_ewt-ud-train.legacy-2022-12.iob2", "dev": "uner_ewt/en_ewt-ud-dev.iob2",
        "test": "uner_ewt/en_ewt-ud-test.iob2"}
SPLITS = ("train", "dev", "test")


class StudyModel(NamedTuple):
    name: str
    config: str
    component: str
    dependency_features: Optional[bool]  # None: the model has no such setting
    lattice: Optional[str]  # its key in the coverage report, None for tag-based models


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


def data_file(data: Path, split: str, kind: str) -> Path:
    """The split's CoNLL-U file (``kind`` "conllu") or UNER IOB2 file ("iob2") under the data directory."""
    return data / (CONLLU.format(split=split) if kind == "conllu" else IOB2[split])
