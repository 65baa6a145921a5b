"""``python -m spacy_depner evaluate``: score a trained entity pipeline on any
CoNLL-U + UNER IOB2 pair, with the gold trees or with trees from a parser.

Writes JSON: entity P/R/F overall and per type, words/s of the entity
pipeline (the parser's time excluded), the parser's UAS/LAS when a parser
gives the trees, and per-sentence (TP, FP, FN) counts for significance tests.
"""
import json
import time
from pathlib import Path
from typing import Dict, List, Optional

import numpy as np
import typer

from .cli import app
from .readers.conllu import sentences_to_doc
from .readers.uner import DEFAULT_LABELS, UNERCorpus, read_uner_corpus
from .significance import f1_from_counts, item_counts


def parse_words(parser_path: Path, sentences, batch_size: int = 256):
    """Docs of (words, spaces, sent_starts) triples parsed by the pipeline at
    ``parser_path``, in its vocab, and that vocab. spaCy's parser respects the
    sentence starts: one root per marked sentence, as in the gold trees."""
    import spacy
    from spacy.tokens import Doc

    parser_nlp = spacy.load(parser_path)
    docs = [Doc(parser_nlp.vocab, words=words, spaces=spaces, sent_starts=starts) for words, spaces, starts in sentences]
    return list(parser_nlp.pipe(docs, batch_size=batch_size)), parser_nlp.vocab


def parse_corpus(parser_path: Path, corpus: UNERCorpus, batch_size: int = 256):
    """Docs of the corpus's sentences (one per sentence, words only, each
    marked as one sentence, so that no lattice loses spans to a sentence
    split the gold data lacks) parsed by the pipeline at ``parser_path``."""
    return parse_words(parser_path, ((s.words, s.spaces, [i == 0 for i in range(len(s.words))]) for s in corpus.sentences),
                       batch_size)


def parsed_docs(parser_path: Path, docs, batch_size: int = 256) -> List:
    """The Docs' words parsed by the pipeline at ``parser_path``, in its
    vocab; each Doc keeps its sentence starts."""
    items = (([t.text for t in d], [bool(t.whitespace_) for t in d], [bool(t.is_sent_start) for t in d]) for d in docs)
    return parse_words(parser_path, items, batch_size)[0]


def uas_las(predicted_heads, predicted_deps, gold_heads, gold_deps) -> Dict[str, float]:
    """UAS and LAS (percent, punctuation included) from flat arrays of heads
    (a root is its own head) and lowercased dependency labels."""
    heads_right = np.asarray(predicted_heads) == np.asarray(gold_heads)
    labels_right = np.asarray(predicted_deps) == np.asarray(gold_deps)
    return {"uas": round(100.0 * heads_right.mean(), 2), "las": round(100.0 * (heads_right & labels_right).mean(), 2)}


def tree_agreement(predicted, gold) -> Dict[str, float]:
    """UAS and LAS of Docs against Docs with the gold trees."""
    def flat(docs):
        return [t.head.i for d in docs for t in d], [t.dep_.lower() for d in docs for t in d]

    return uas_las(*flat(predicted), *flat(gold))


def attachment_scores(docs, corpus: UNERCorpus) -> Dict[str, float]:
    """UAS and LAS of the Docs' trees against the corpus's gold trees."""
    gold_heads = [h if h >= 0 else i for s in corpus.sentences for i, h in enumerate(s.heads)]
    gold_deps = [("root" if h < 0 else d.lower()) for s in corpus.sentences for h, d in zip(s.heads, s.deprels)]
    return uas_las([t.head.i for doc in docs for t in doc], [t.dep_.lower() for doc in docs for t in doc], gold_heads, gold_deps)


def entity_sets(docs) -> List[set]:
    return [{(e.start, e.end, e.label_) for e in doc.ents} for doc in docs]


def load_corpus(conllu: Path, uner: Path, limit: int = 0, labels=DEFAULT_LABELS) -> UNERCorpus:
    """The joined corpus, cut to its first ``limit`` sentences (0: all)."""
    corpus = read_uner_corpus(conllu, uner, labels)
    if limit:
        corpus = UNERCorpus(corpus.sentences[:limit], corpus.tags[:limit], corpus.repairs, corpus.removed)
    return corpus


def input_docs(vocab, corpus: UNERCorpus, parsed=None) -> List:
    """One input Doc per sentence, in ``vocab``: with the gold trees, or with
    the trees of ``parsed`` (Docs from ``parse_corpus``)."""
    if parsed is None:
        return [sentences_to_doc(vocab, [s], with_trees=True) for s in corpus.sentences]
    return [_with_vocab(vocab, d) for d in parsed]


def score_pipeline(nlp, corpus: UNERCorpus, docs, labels=DEFAULT_LABELS, batch_size: int = 256) -> Dict:
    """P/R/F overall and per type, words/s and per-sentence (TP, FP, FN) of
    ``nlp`` run on ``docs`` (the corpus's sentences)."""
    gold_docs = [sentences_to_doc(nlp.vocab, [s], with_trees=False, ents=tags) for s, tags in zip(corpus.sentences, corpus.tags)]
    n_words = sum(len(doc) for doc in docs)
    start = time.perf_counter()
    predicted = list(nlp.pipe([doc.copy() for doc in docs], batch_size=batch_size))
    seconds = time.perf_counter() - start
    gold_sets, predicted_sets = entity_sets(gold_docs), entity_sets(predicted)
    counts = item_counts(gold_sets, predicted_sets)
    result = _prf(counts)
    result["per_type"] = {
        label: _prf(item_counts([{e for e in g if e[2] == label} for g in gold_sets],
                                [{e for e in p if e[2] == label} for p in predicted_sets]))
        for label in labels
    }
    result.update({"words": n_words, "seconds": round(seconds, 3), "words_per_second": round(n_words / max(seconds, 1e-9), 1),
                   "sentence_counts": counts.tolist()})
    return result


def evaluate_pipeline(model: Path, conllu: Path, uner: Path, parser: Optional[Path] = None,
                      labels=DEFAULT_LABELS, batch_size: int = 256, limit: int = 0) -> Dict:
    """Entity scores of the pipeline at ``model`` on the corpus, with gold trees
    (``parser`` None) or the trees of the parser pipeline at ``parser``."""
    import spacy

    nlp = spacy.load(model)
    corpus = load_corpus(conllu, uner, limit, labels)
    result: Dict = {"model": str(model), "conllu": str(conllu), "uner": str(uner),
                    "trees": "predicted" if parser else "given"}
    parsed = None
    if parser:
        parsed, _ = parse_corpus(parser, corpus, batch_size)
        result["parser"] = {"path": str(parser), **attachment_scores(parsed, corpus)}
    result.update(score_pipeline(nlp, corpus, input_docs(nlp.vocab, corpus, parsed), labels, batch_size))
    return result


def _with_vocab(vocab, doc):
    """The Doc's words, spaces and trees in ``vocab`` (the entity pipeline's)."""
    from spacy.tokens import Doc

    return Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               heads=[t.head.i for t in doc], deps=[t.dep_ for t in doc]) if len(doc) else Doc(vocab, words=[])


def _prf(counts: np.ndarray) -> Dict[str, float]:
    tp, fp, fn = counts.sum(axis=0) if len(counts) else (0, 0, 0)
    return {"p": round(100.0 * tp / max(tp + fp, 1), 2), "r": round(100.0 * tp / max(tp + fn, 1), 2),
            "f": round(100.0 * f1_from_counts(counts), 2) if len(counts) else 0.0}


@app.command("evaluate")
def evaluate(
    model: Path = typer.Argument(..., help="Trained pipeline directory"),
    conllu: Path = typer.Option(..., help="CoNLL-U file (words, and the gold trees)"),
    uner: Path = typer.Option(..., help="UNER IOB2 file with the entities of the same sentences"),
    parser: Optional[Path] = typer.Option(None, help="Parser pipeline for predicted trees (default: the gold trees)"),
    output: Optional[Path] = typer.Option(None, help="JSON file to write (default: print)"),
    limit: int = typer.Option(0, help="Score only the first LIMIT sentences (0: all)"),
) -> None:
    """Score MODEL on a CoNLL-U + IOB2 pair; P/R/F, words/s, and the parser's UAS/LAS with --parser."""
    result = evaluate_pipeline(model, conllu, uner, parser, limit=limit)
    summary = {k: v for k, v in result.items() if k != "sentence_counts"}
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result), encoding="utf8")
    typer.echo(json.dumps(summary, indent=2))


def nested_file_examples(vocab, jsonl: Optional[Path], gum: Optional[Path], spans_key: str) -> List:
    """Examples of a GENIA file, or of a GUM file with its gold trees in the input."""
    from .readers.genia import genia_examples, read_genia
    from .readers.gum import gum_examples, read_gum

    if jsonl is not None:
        return genia_examples(vocab, read_genia(jsonl), spans_key)
    return gum_examples(vocab, read_gum(gum), "given", spans_key)


def nested_scores(model: Path, jsonl: Optional[Path] = None, gum: Optional[Path] = None, parser: Optional[Path] = None,
                  spans_key: str = "nested_ner") -> Dict:
    """P/R/F of nested mentions (overall and per label) and words/s of the
    pipeline at ``model`` on a GENIA file or a GUM file; on GUM with the gold
    trees, or with those of the parser pipeline at ``parser`` (its time
    excluded; its UAS/LAS against the gold trees reported)."""
    import spacy

    from .readers.gum import gum_examples, read_gum
    from .scoring import score_nested

    if (jsonl is None) == (gum is None):
        raise ValueError("give one of a GENIA file (jsonl) or a GUM file (gum)")
    if parser is not None and gum is None:
        raise ValueError("a parser goes with a GUM file (GENIA has no trees)")
    nlp = spacy.load(model)
    extra = {}
    if parser is None:
        examples = nested_file_examples(nlp.vocab, jsonl, gum, spans_key)
    else:
        examples = gum_examples(nlp.vocab, read_gum(gum), "predicted", spans_key)
        parsed = parsed_docs(parser, [eg.predicted for eg in examples])
        extra["parser"] = {"path": str(parser), **tree_agreement(parsed, [eg.reference for eg in examples])}
        for eg, doc in zip(examples, parsed):
            eg.predicted = _with_vocab(nlp.vocab, doc)
    n_words = sum(len(eg.predicted) for eg in examples)
    list(nlp.pipe([eg.predicted.copy() for eg in examples[:50]]))  # warm-up: numba cache, allocations
    start = time.perf_counter()
    for eg, doc in zip(examples, nlp.pipe([eg.predicted for eg in examples], batch_size=256)):
        eg.predicted = doc
    seconds = time.perf_counter() - start
    scores = score_nested(examples, spans_key=spans_key)
    return {"model": str(model), "file": str(jsonl or gum), "trees": "predicted" if parser else "given", **extra,
            "words": n_words, "words_per_second": round(n_words / max(seconds, 1e-9), 1),
            **{k.replace(f"spans_{spans_key}_", ""): v for k, v in scores.items()}}


@app.command("evaluate-nested")
def evaluate_nested(
    model: Path = typer.Argument(..., help="Trained pipeline that writes doc.spans[spans_key] (nested_ner, spancat)"),
    jsonl: Optional[Path] = typer.Option(None, help="GENIA JSON-lines file"),
    gum: Optional[Path] = typer.Option(None, help="UD English-GUM CoNLL-U file (gold trees in the input)"),
    parser: Optional[Path] = typer.Option(None, help="With --gum: parser pipeline whose trees replace the gold ones"),
    spans_key: str = typer.Option("nested_ner", help="Span group of the mentions"),
    output: Optional[Path] = typer.Option(None, help="JSON file to write (default: print only)"),
) -> None:
    """P/R/F of nested mentions (overall and per label) and words/s on a GENIA
    or GUM file; on GUM with the gold trees, or a parser's (its time excluded)."""
    if (jsonl is None) == (gum is None):
        raise typer.BadParameter("give one of --jsonl or --gum")
    if parser is not None and gum is None:
        raise typer.BadParameter("--parser goes with --gum (GENIA has no trees)")
    result = nested_scores(model, jsonl, gum, parser, spans_key)
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=2), encoding="utf8")
    typer.echo(json.dumps(result, indent=2))


@app.command("tune-penalty")
def tune_penalty_command(
    model: Path = typer.Argument(..., help="Trained pipeline with a hypergraph_ner component"),
    output: Path = typer.Argument(..., help="Where to save the pipeline with the tuned mention penalty"),
    jsonl: Optional[Path] = typer.Option(None, help="GENIA JSON-lines development file"),
    gum: Optional[Path] = typer.Option(None, help="UD English-GUM CoNLL-U development file"),
    component: str = typer.Option("hypergraph_ner", help="Name of the hypergraph_ner component"),
    step: float = typer.Option(0.01, help="Step of the search (Lu & Roth 2015, sec. 3.7: 0.01)"),
    low: float = typer.Option(-3.0, help="Smallest penalty tried"),
    high: float = typer.Option(3.0, help="Largest penalty tried"),
) -> None:
    """Set the mention penalty of a hypergraph_ner pipeline for the best F1 on
    development data (a fixed-step search) and save the pipeline to OUTPUT."""
    if (jsonl is None) == (gum is None):
        raise typer.BadParameter("give one of --jsonl or --gum")
    typer.echo(json.dumps(tune_pipeline_penalty(model, output, jsonl, gum, component, step, low, high), indent=2))


def tune_pipeline_penalty(model: Path, output: Path, jsonl: Optional[Path] = None, gum: Optional[Path] = None,
                          component: str = "hypergraph_ner", step: float = 0.01, low: float = -3.0,
                          high: float = 3.0) -> Dict[str, float]:
    """``tune_penalty`` of the hypergraph_ner component of the pipeline at
    ``model`` on a GENIA or GUM development file (the components before it
    annotate the inputs); the tuned pipeline is saved to ``output``."""
    import spacy

    nlp = spacy.load(model)
    if component not in nlp.pipe_names:
        raise ValueError(f"{model} has no component {component!r} (it has {nlp.pipe_names})")
    pipe = nlp.get_pipe(component)
    examples = nested_file_examples(nlp.vocab, jsonl, gum, pipe.cfg["spans_key"])
    with nlp.select_pipes(disable=[component]):
        for eg, doc in zip(examples, nlp.pipe([eg.predicted for eg in examples])):
            eg.predicted = doc
    result = pipe.tune_penalty(examples, step=step, low=low, high=high)
    nlp.to_disk(output)
    return result
