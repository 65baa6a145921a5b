"""The models and data files of the nested-mention study (Corro 2023 on
GENIA, Lu & Roth 2015's mention hypergraph, and UD English-GUM with and
without dependency guidance)."""
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

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


def structure_overrides(structure: str, guided: bool = False) -> List[str]:
    """``spacy train`` overrides of nested_ner's structure and, if ``guided``,
    of its suggester: the DGM valid spans of the trees instead of every span."""
    suggester = "spacy_depner.dgm_suggester.v1" if guided else "spacy_depner.all_spans_suggester.v1"
    return ["--components.nested_ner.structure", structure, "--components.nested_ner.suggester.@misc", suggester]


MODELS = [
    NestedModel(f"{corpus}_{structure}", corpus, f"{corpus}_nested.cfg", structure_overrides(structure), f"nested_ner {structure}")
    for corpus in CORPORA for structure in ("semi_markov", "cyk", "quadratic")
] + [
    NestedModel(f"{corpus}_spancat", corpus, f"{corpus}_spancat.cfg", [], "spaCy spancat")
    for corpus in CORPORA
] + [
    NestedModel(f"{corpus}_hypergraph", corpus, f"{corpus}_hypergraph.cfg", [], "hypergraph_ner (MH)", tuned=True)
    for corpus in CORPORA
] + [
    NestedModel("gum_hypergraph_heads", "gum", "gum_hypergraph.cfg", ["--components.hypergraph_ner.heads", "true"],
                "hypergraph_ner with heads (minspan)", tuned=True)
] + [NestedModel("gum_quadratic_dgm", "gum", "gum_nested.cfg", structure_overrides("quadratic", True),
                 "nested_ner quadratic, DGM valid spans", guided=True)]
PARSER = "gum_parser"


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
