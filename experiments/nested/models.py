"""The models and data files of the nested-mention study (Corro 2023 on
GENIA, Lu & Roth 2015's mention hypergraph, and UD English-GUM with and
without dependency guidance)."""

from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

from ..kit.seeds import pick_names

CORPORA = {"genia": "genia/{split}.jsonl", "gum": "ud_gum/en_gum-ud-{split}.conllu"}
SPLITS = ("train", "dev", "test")


class NestedModel(NamedTuple):
    name: str
    corpus: str  # a key of CORPORA
    config: str
    overrides: List[str]
    title: str
    guided: bool = False  # restricted to DGM valid spans: also scored with the parser's trees
    tuned: bool = False  # hypergraph_ner: also scored after tuning the mention penalty on dev
    pretrained: bool = (
        False  # the pretrained pipeline's parser sourced, frozen, annotating: its trees in training and test
    )


def space_overrides(space: str, guided: bool = False) -> List[str]:
    """``spacy train`` overrides of nested_ner's space and, if ``guided``,
    of its suggester: the DGM valid spans of the trees instead of every span."""
    suggester = "spacy_depner.dgm_suggester.v1" if guided else "spacy_depner.all_spans_suggester.v1"
    return ["--components.nested_ner.space", space, "--components.nested_ner.suggester.@misc", suggester]


MODELS = (
    [
        NestedModel(
            f"{corpus}_{space}",
            corpus,
            f"{corpus}_nested.cfg",
            space_overrides(space),
            f"nested_ner {space}",
        )
        for corpus in CORPORA
        for space in ("semi_markov", "cyk", "quadratic")
    ]
    + [NestedModel(f"{corpus}_spancat", corpus, f"{corpus}_spancat.cfg", [], "spaCy spancat") for corpus in CORPORA]
    + [
        NestedModel(f"{corpus}_hypergraph", corpus, f"{corpus}_hypergraph.cfg", [], "hypergraph_ner (MH)", tuned=True)
        for corpus in CORPORA
    ]
    + [
        NestedModel(
            "gum_hypergraph_heads",
            "gum",
            "gum_hypergraph.cfg",
            ["--components.hypergraph_ner.heads", "true"],
            "hypergraph_ner with heads (minspan)",
            tuned=True,
        )
    ]
    + [
        NestedModel(
            "gum_quadratic_dgm",
            "gum",
            "gum_nested.cfg",
            space_overrides("quadratic", True),
            "nested_ner quadratic, DGM valid spans",
            guided=True,
        )
    ]
)
DEPENDENCY_FEATURES = {
    "nested_ner": ["--components.nested_ner.model.dependency_features", "true"],
    "hypergraph_ner": ["--components.hypergraph_ner.model.dependency_features", "true"],
}
# GUM on the trees of a pretrained pipeline's parser (``study train --pretrained-pipeline``), as a spaCy user has them
MODELS += [
    NestedModel(
        "gum_quadratic_dgm@pretrained",
        "gum",
        "gum_nested.cfg",
        space_overrides("quadratic", True),
        "nested_ner quadratic, DGM valid spans",
        pretrained=True,
    ),
    NestedModel(
        "gum_quadratic_dgm+dep@pretrained",
        "gum",
        "gum_nested.cfg",
        space_overrides("quadratic", True) + DEPENDENCY_FEATURES["nested_ner"],
        "nested_ner quadratic, DGM valid spans + dependency features",
        pretrained=True,
    ),
    NestedModel(
        "gum_hypergraph_heads+dep@pretrained",
        "gum",
        "gum_hypergraph.cfg",
        ["--components.hypergraph_ner.heads", "true"] + DEPENDENCY_FEATURES["hypergraph_ner"],
        "hypergraph_ner with heads + dependency features",
        tuned=True,
        pretrained=True,
    ),
]
PARSER = "gum_parser"


def model_names(chosen: str) -> List[str]:
    """The models to train: "all" (every model but those in a pretrained
    pipeline, which are named) or names separated by commas, in the order of MODELS."""
    if chosen.strip() == "all":
        return [model.name for model in MODELS if not model.pretrained]
    return pick_names(chosen, [model.name for model in MODELS])


def corpus_files(data: Path, corpus: str, split: str, genia: Optional[Path] = None) -> Dict[str, Path]:
    """The split's file as the keyword of the readers' commands: {"jsonl": ...} (GENIA, from the
    folder ``genia`` if given) or {"gum": ...}."""
    if corpus == "genia" and genia is not None:
        return {"jsonl": genia / f"{split}.jsonl"}
    return {"jsonl" if corpus == "genia" else "gum": data / CORPORA[corpus].format(split=split)}


def corpus_overrides(corpus: str, genia: Optional[Path] = None) -> List[str]:
    """``spacy train`` overrides of a GENIA model's train and dev files when they are in the folder ``genia``."""
    if corpus != "genia" or genia is None:
        return []
    return ["--paths.train", str(genia / "train.jsonl"), "--paths.dev", str(genia / "dev.jsonl")]
