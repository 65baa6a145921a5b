"""``pretrained-first-stage gum-articles``: how much of a pipeline's GUM score
is GUM's span convention for a leading "the".

GUM brackets a named mention as a whole noun phrase, its article included
("the United States"); UNER English-EWT, the training data, leaves the article
out ("the [United States]"). A pipeline trained on UNER learns to leave it
out, and GUM's whole-mention measure counts each such mention as one false
positive and one false negative. This command scores every pipeline on GUM's
whole named mentions twice with the same exact-match rule (spaCy's): as they
are, and with a leading "the" dropped from every gold and every predicted
entity of two or more tokens alike, so that only the article convention
changes. It also counts the gold entities that begin with "the" in EWT dev and
GUM test.
"""

from pathlib import Path
from typing import Annotated, Dict, Iterable, List, Optional, Tuple

import typer
from spacy.tokens import Doc, Span

from ..kit.options import DATA, PRETRAINED_PIPELINE, TRAIN_SEEDS
from ..kit.outputs import write_file
from ..kit.seeds import parse_seeds
from ..kit.tables import mean_sd, table

ARTICLE = "the"


def without_article(doc: Doc, spans: Iterable[Span]) -> List[Span]:
    """``spans`` of ``doc``, each of two or more tokens whose first token is
    "the" (any case) starting one token later."""
    return [
        Span(doc, span.start + 1, span.end, label=span.label) if len(span) > 1 and span[0].lower_ == ARTICLE else span
        for span in spans
    ]


def reference_without_article(doc: Doc) -> Doc:
    """A copy of a reference Doc whose entities lost their leading "the"."""
    copy = doc.copy()
    copy.set_ents(without_article(copy, copy.ents), default="outside")
    return copy


class ArticleNeutral:
    """A pipeline (anything with ``vocab`` and ``pipe``, e.g. ``MappedEntities``)
    whose predicted entities lose their leading "the", as ``without_article``."""

    def __init__(self, nlp):
        self.nlp, self.vocab = nlp, nlp.vocab

    def pipe(self, docs: Iterable[Doc], batch_size: int = 256) -> Iterable[Doc]:
        for doc in self.nlp.pipe(docs, batch_size=batch_size):
            doc.set_ents(without_article(doc, doc.ents), default="outside")
            yield doc


class Recorded:
    """A pipeline that runs ``nlp`` once and keeps a copy of every Doc it
    returns (``docs``), so that a second scoring can replay them."""

    def __init__(self, nlp):
        self.nlp, self.vocab, self.docs = nlp, nlp.vocab, []

    def pipe(self, docs: Iterable[Doc], batch_size: int = 256) -> Iterable[Doc]:
        for doc in self.nlp.pipe(docs, batch_size=batch_size):
            self.docs.append(doc.copy())
            yield doc

    def replay(self, docs: Iterable[Doc], batch_size: int = 256) -> Iterable[Doc]:
        """The recorded Docs again, in the order they were made, for the same inputs."""
        inputs = list(docs)
        if [len(doc) for doc in inputs] != [len(doc) for doc in self.docs]:
            raise ValueError("replay needs the inputs the pipeline was run on, in the same order")
        return iter([doc.copy() for doc in self.docs])


class Replayed:
    """The Docs of a ``Recorded`` run, as a pipeline (``vocab`` and ``pipe``)."""

    def __init__(self, recorded: Recorded):
        self.vocab, self.pipe = recorded.vocab, recorded.replay


def gum_scores(nlp, data: Path, unit: str) -> Tuple[float, float]:
    """F1 (points) of ``nlp`` on GUM test's whole named mentions run in
    ``unit``: exact, and with a leading "the" dropped from gold and predicted
    entities alike (the same predictions, the pipeline run once)."""
    from spacy_depner.evaluation.scoring_units import score_by_unit

    from .pretrained_scores import split_examples

    examples = split_examples(nlp.vocab, data, "gum")
    references, inputs = [eg.reference for eg in examples], [eg.predicted for eg in examples]
    recorded = Recorded(nlp)
    exact = score_by_unit(recorded, references, inputs, unit)["f"]
    stripped = [reference_without_article(d) for d in references]
    neutral = score_by_unit(ArticleNeutral(Replayed(recorded)), stripped, inputs, unit)
    return 100 * exact, 100 * neutral["f"]


def article_counts(data: Path) -> Dict[str, Tuple[int, int]]:
    """{split: (gold entities, those beginning with "the")} of EWT dev and GUM test."""
    import spacy

    from .pretrained_scores import split_examples

    vocab = spacy.blank("en").vocab
    counts = {}
    for split in ("dev", "gum"):
        entities = [e for eg in split_examples(vocab, data, split) for e in eg.reference.ents]
        counts[split] = (len(entities), sum(e[0].lower_ == ARTICLE for e in entities))
    return counts


TITLE = '# GUM\'s article convention: whole named mentions with and without a leading "the"'
INTRO = (
    "GUM test (out of domain; 30 documents, the data's tokens and sentence starts) scored by spaCy's exact-match "
    "rule on its whole named mentions (person, organization, place as PER, ORG, LOC), as they are and with a "
    'leading "the" dropped from every gold and every predicted entity of two or more tokens alike: GUM brackets '
    'the article ("the United States"), UNER English-EWT, the training data, leaves it out. Each pipeline runs '
    "in its unit (`_by_sentence`: one Doc per sentence; else whole documents); mean ± sd over the seeds of the "
    "trained ones, F1 in points."
)


def article_table(rows: Dict[str, List[Tuple[float, float]]], counts: Dict[str, Tuple[int, int]]) -> str:
    """The markdown report: title, what is scored, one row per pipeline (name,
    exact F, F without the article, the difference; mean ± sd over seeds),
    then the counts."""
    header = ["pipeline", "GUM whole mentions F", 'the same, a leading "the" dropped from gold and predicted', "gain"]
    cells = [
        [name, mean_sd([e for e, _ in scores]), mean_sd([n for _, n in scores]), mean_sd([n - e for e, n in scores])]
        for name, scores in rows.items()
    ]
    lines = [TITLE, "", INTRO, "", table(header, cells), ""]
    names = {"dev": "UNER English-EWT dev", "gum": "GUM test (named person, organization, place)"}
    for split, (total, with_article) in counts.items():
        share = 100 * with_article / max(total, 1)
        lines.append(f'- {names[split]}: {with_article} of {total} gold entities begin with "the" ({share:.1f}%).')
    return "\n".join(lines) + "\n"


def gum_articles(
    data: Path = DATA,
    models: Path = typer.Option(..., help="The OUTPUT of train"),
    output: Path = typer.Option(..., help="Markdown file to write"),
    pretrained_pipeline: Annotated[Optional[str], PRETRAINED_PIPELINE] = None,
    seeds: str = TRAIN_SEEDS,
    names: Annotated[
        str,
        typer.Option(
            "--models-trained",
            help="Pipelines, separated by commas: a model of OUTPUT/seed_<s>, with _by_sentence to run it on one "
            "Doc per sentence; sm_ner_mapped: the pretrained pipeline's own ner, mapped",
        ),
    ] = "sm_ner_mapped",
) -> None:
    """GUM test's whole named mentions scored as they are and with a leading "the" dropped from gold and
    predicted entities alike: how much of each pipeline's GUM score is the article convention."""
    import spacy

    from ..dgm.pretrained_ner import MappedEntities
    from .pretrained_scores import BY_SENTENCE, MAPPED, unit_of

    if pretrained_pipeline is None:
        raise typer.BadParameter("give the pretrained pipeline, e.g. DATA/models/en_core_web_sm-3.8.0")
    rows: Dict[str, List[Tuple[float, float]]] = {}
    for name in [name.strip() for name in names.split(",") if name.strip()]:
        model, unit = name.removesuffix(BY_SENTENCE), unit_of(name)
        if model == MAPPED:  # no training: the same for every seed
            rows[name] = [gum_scores(MappedEntities(spacy.load(pretrained_pipeline)), data, unit)]
            continue
        paths = [models / f"seed_{seed}" / model / "model-best" for seed in parse_seeds(seeds)]
        missing = [str(path) for path in paths if not path.is_dir()]
        if missing:
            raise typer.BadParameter(f"{name}: no pipeline at {', '.join(missing)}", param_hint="--models-trained")
        rows[name] = [gum_scores(spacy.load(path), data, unit) for path in paths]
    write_file(output, article_table(rows, article_counts(data)))
    typer.echo(f"wrote {output}")
