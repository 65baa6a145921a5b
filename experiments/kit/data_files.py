"""Where the English-EWT files lie in a data directory laid out as
project.yml's assets (the DGM, pretraining and two-stage studies read them)."""

from pathlib import Path

CONLLU = "ud_ewt/r2.9/en_ewt-ud-{split}.conllu"
IOB2 = {
    "train": "uner_ewt/en_ewt-ud-train.legacy-2022-12.iob2",
    "dev": "uner_ewt/en_ewt-ud-dev.iob2",
    "test": "uner_ewt/en_ewt-ud-test.iob2",
}


def data_file(data: Path, split: str, kind: str) -> Path:
    """The split's CoNLL-U file (``kind`` "conllu") or UNER IOB2 file ("iob2") under the data directory."""
    return data / (CONLLU.format(split=split) if kind == "conllu" else IOB2[split])
