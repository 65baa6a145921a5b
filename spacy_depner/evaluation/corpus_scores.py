"""Scores of trained pipelines on corpus files: entity P/R/F of a pipeline on
a CoNLL-U + UNER IOB2 pair (gold trees, or a parser's), nested P/R/F on a
GENIA or GUM file, the parser's UAS/LAS, words/s, and per-sentence (TP, FP,
FN) counts for the significance tests. P/R/F and UAS/LAS are fractions
(``metrics``)."""
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Dict, List, Optional

from ..util.pipelines import load_pipeline
from ..readers.conllu import sentences_to_doc
from ..readers.uner import DEFAULT_LABELS, UNERCorpus, read_uner_corpus
from .metrics import prf_from_counts, uas_las
from ..util.progress import progress
from .significance import item_counts


def parses(nlp) -> bool:
    """Whether a component of the pipeline sets dependency trees. Such a
    pipeline is given input Docs without trees: spaCy's parser leaves broken
    trees where it parses over preset heads."""
    return any("token.dep" in nlp.get_pipe_meta(name).assigns for name in nlp.pipe_names)


def require_no_second_parser(nlp, model: Path, parser: Optional[Path]) -> None:
    """A parser given for the trees of a pipeline that parses itself would be overwritten: an error."""
    if parser and parses(nlp):
        raise ValueError(f"The pipeline {model} has its own parser (its components: {nlp.pipe_names}), which sets the "
                         f"trees it reads: leave out the parser {parser}, or give a pipeline without a parser.")


def parse_words(parser_path: Path, sentences, batch_size: int = 256):
    """Docs of (words, spaces, sent_starts) triples parsed by the pipeline at
    ``parser_path``, in its vocab, and that vocab. spaCy's parser respects the
    sentence starts: one root per marked sentence, as in the gold trees."""
    from spacy.tokens import Doc

    parser_nlp = load_pipeline(parser_path)
    if not parses(parser_nlp):
        raise ValueError(f"The pipeline {parser_path} has no parser (its components: {parser_nlp.pipe_names}): "
                         "give a pipeline with a trained parser as --parser.")
    docs = [Doc(parser_nlp.vocab, words=words, spaces=spaces, sent_starts=starts) for words, spaces, starts in sentences]
    return list(progress(parser_nlp.pipe(docs, batch_size=batch_size), len(docs), "parse")), parser_nlp.vocab


def parse_sentences(parser_path: Path, sentences, batch_size: int = 256):
    """Docs of CoNLL-U sentences (one per sentence, words only, each marked
    as one sentence, so that no lattice loses spans to a sentence split the
    gold data lacks) parsed by the pipeline at ``parser_path``, and its vocab."""
    return parse_words(parser_path, ((s.words, s.spaces, [i == 0 for i in range(len(s.words))]) for s in sentences),
                       batch_size)


def parse_corpus(parser_path: Path, corpus: UNERCorpus, batch_size: int = 256):
    """``parse_sentences`` of the corpus's sentences."""
    return parse_sentences(parser_path, corpus.sentences, batch_size)


def sentence_heads(doc) -> List[int]:
    """A one-sentence Doc's heads as CoNLL-U sentences hold them: token indices, -1 for the root."""
    return [-1 if t.head.i == t.i else t.head.i for t in doc]


def trees_given(nlp, parser: Optional[Path] = None) -> bool:
    """Whether the pipeline's input Docs carry the data's gold trees: not
    when a parser's trees replace them, nor when the pipeline parses itself
    (``parses``)."""
    return parser is None and not parses(nlp)


def parsed_docs(parser_path: Path, docs, batch_size: int = 256) -> List:
    """The Docs' words parsed by the pipeline at ``parser_path``, in its
    vocab; each Doc keeps its sentence starts."""
    items = (([t.text for t in d], [bool(t.whitespace_) for t in d], [bool(t.is_sent_start) for t in d]) for d in docs)
    return parse_words(parser_path, items, batch_size)[0]


def doc_trees(docs):
    """The Docs' heads (each Doc's own token indices; a root is its own head)
    and lowercased dependency labels, as two flat lists."""
    return [t.head.i for d in docs for t in d], [t.dep_.lower() for d in docs for t in d]


def tree_agreement(predicted, gold) -> Dict[str, float]:
    """UAS and LAS (fractions) of Docs against Docs with the gold trees
    (dependency labels compared lowercased)."""
    return uas_las(*doc_trees(predicted), *doc_trees(gold))


def attachment_scores(docs, corpus: UNERCorpus) -> Dict[str, float]:
    """UAS and LAS (fractions) of the Docs' trees against the corpus's gold trees."""
    gold_heads = [h if h >= 0 else i for s in corpus.sentences for i, h in enumerate(s.heads)]
    gold_deps = [("root" if h < 0 else d.lower()) for s in corpus.sentences for h, d in zip(s.heads, s.deprels)]
    return uas_las(*doc_trees(docs), gold_heads, gold_deps)


def require_entity_writer(nlp, model: Path) -> None:
    """A pipeline scored on ``doc.ents`` must have a component that writes them."""
    if not any("doc.ents" in nlp.get_pipe_meta(name).assigns for name in nlp.pipe_names):
        raise ValueError(
            f"The pipeline {model} has no component that writes doc.ents (its components: {nlp.pipe_names}). "
            "Score a pipeline with dgm_ner, chain_ner or ner, or nested mentions with evaluate-nested --spans-key KEY."
        )


def require_span_group(nlp, model: Path, doc, spans_key: str) -> None:
    """A pipeline scored on ``doc.spans[spans_key]`` must write that group:
    checked on the output for one input Doc (``doc``, not changed)."""
    keys = sorted(nlp(doc.copy()).spans.keys())
    if spans_key not in keys:
        raise ValueError(
            f"The pipeline {model} writes no span group {spans_key!r} (it writes {keys or 'no span group'}; "
            f"components: {nlp.pipe_names}). Pass --spans-key with the key of its nested component."
        )


def warn_if_nothing_predicted(predicted: int, gold: int, what: str) -> None:
    """Warn when the pipeline predicted nothing although the gold data has something: P/R/F 0."""
    if predicted == 0 and gold > 0:
        warnings.warn(f"the pipeline predicted no {what} ({gold} in the gold data): P, R and F are 0", stacklevel=2)


def entity_sets(docs) -> List[set]:
    """(start, end, label) of each Doc's entities."""
    return [{(e.start, e.end, e.label_) for e in doc.ents} for doc in docs]


def entity_counts(predicted_docs, reference_docs):
    """Per-Doc (TP, FP, FN) of the predicted Docs' entities against the reference Docs' (M, 3)."""
    return item_counts(entity_sets(reference_docs), entity_sets(predicted_docs))


def first_sentences(corpus: UNERCorpus, limit: int) -> UNERCorpus:
    """The corpus cut to its first ``limit`` sentences (0: all)."""
    return replace(corpus, sentences=corpus.sentences[:limit], tags=corpus.tags[:limit]) if limit else corpus


def load_corpus(conllu: Path, uner: Path, limit: int = 0, labels=DEFAULT_LABELS) -> UNERCorpus:
    """The joined corpus, cut to its first ``limit`` sentences (0: all)."""
    return first_sentences(read_uner_corpus(conllu, uner, labels), limit)


def with_vocab(vocab, doc):
    """The Doc's words, spaces and trees in ``vocab`` (an entity pipeline's)."""
    from spacy.tokens import Doc

    return Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               heads=[t.head.i for t in doc], deps=[t.dep_ for t in doc]) if len(doc) else Doc(vocab, words=[])


def input_docs(vocab, corpus: UNERCorpus, parsed=None, trees: bool = True) -> List:
    """One input Doc per sentence, in ``vocab``: with the gold trees, with
    the trees of ``parsed`` (Docs from ``parse_corpus``), or with ``trees``
    False none (words and the sentence start: for a pipeline with its own parser)."""
    if parsed is None:
        return [sentences_to_doc(vocab, [s], with_trees=trees) for s in corpus.sentences]
    return [with_vocab(vocab, d) for d in parsed]


def score_pipeline(nlp, corpus: UNERCorpus, docs, labels=DEFAULT_LABELS, batch_size: int = 256) -> Dict:
    """P/R/F (fractions) overall and per type, words/s and per-sentence (TP,
    FP, FN) of ``nlp`` run on ``docs`` (the corpus's sentences)."""
    gold_docs = [sentences_to_doc(nlp.vocab, [s], with_trees=False, ents=tags) for s, tags in zip(corpus.sentences, corpus.tags)]
    n_words = sum(len(doc) for doc in docs)
    start = time.perf_counter()
    predicted = list(progress(nlp.pipe([doc.copy() for doc in docs], batch_size=batch_size), len(docs), "evaluate"))
    seconds = time.perf_counter() - start
    gold_sets, predicted_sets = entity_sets(gold_docs), entity_sets(predicted)
    counts = item_counts(gold_sets, predicted_sets)
    warn_if_nothing_predicted(sum(map(len, predicted_sets)), sum(map(len, gold_sets)), "entity in doc.ents")
    result = prf_from_counts(counts)
    result["per_type"] = {
        label: prf_from_counts(item_counts([{e for e in g if e[2] == label} for g in gold_sets],
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

    nlp = load_pipeline(model)
    require_entity_writer(nlp, model)
    corpus = load_corpus(conllu, uner, limit, labels)
    result: Dict = {"model": str(model), "conllu": str(conllu), "uner": str(uner),
                    "trees": "predicted" if parser else "given"}
    require_no_second_parser(nlp, model, parser)
    parsed = None
    if parser:
        parsed, _ = parse_corpus(parser, corpus, batch_size)
        result["parser"] = {"path": str(parser), **attachment_scores(parsed, corpus)}
    if parses(nlp):  # the pipeline's own parser gives the trees
        result["trees"] = "the pipeline's parser"
    docs = input_docs(nlp.vocab, corpus, parsed, trees=trees_given(nlp))
    result.update(score_pipeline(nlp, corpus, docs, labels, batch_size))
    return result


def nested_file_examples(vocab, jsonl: Optional[Path], gum: Optional[Path], spans_key: str,
                         dependencies: str = "given") -> List:
    """Examples of a GENIA file, or of a GUM file with its gold trees in the
    input (``dependencies`` "given") or none ("predicted")."""
    from ..readers.genia import genia_examples, read_genia
    from ..readers.gum import gum_examples, read_gum

    if (jsonl is None) == (gum is None):
        raise ValueError("give one of a GENIA file (jsonl) or a GUM file (gum)")
    if jsonl is not None:
        return genia_examples(vocab, read_genia(jsonl), spans_key)
    return gum_examples(vocab, read_gum(gum), dependencies, spans_key)


def nested_scores(model: Path, jsonl: Optional[Path] = None, gum: Optional[Path] = None, parser: Optional[Path] = None,
                  spans_key: str = "nested_ner") -> Dict:
    """P/R/F (fractions) of nested mentions (overall and per label) and
    words/s of the pipeline at ``model`` on a GENIA file or a GUM file; on
    GUM with the gold trees, or with those of the parser pipeline at
    ``parser`` (its time excluded; its UAS/LAS against the gold trees reported)."""

    from .scorers import score_nested

    if parser is not None and gum is None:
        raise ValueError("a parser goes with a GUM file (GENIA has no trees)")
    nlp = load_pipeline(model)
    require_no_second_parser(nlp, model, parser)
    extra = {}
    examples = nested_file_examples(nlp.vocab, jsonl, gum, spans_key, "given" if trees_given(nlp, parser) else "predicted")
    if parser is not None:
        parsed = parsed_docs(parser, [eg.predicted for eg in examples])
        extra["parser"] = {"path": str(parser), **tree_agreement(parsed, [eg.reference for eg in examples])}
        for eg, doc in zip(examples, parsed):
            eg.predicted = with_vocab(nlp.vocab, doc)
    if examples:
        require_span_group(nlp, model, examples[0].predicted, spans_key)
    n_words = sum(len(eg.predicted) for eg in examples)
    list(nlp.pipe([eg.predicted.copy() for eg in examples[:50]]))  # warm-up: numba cache, allocations
    start = time.perf_counter()
    for eg, doc in zip(examples, progress(nlp.pipe([eg.predicted for eg in examples], batch_size=256), len(examples), "evaluate")):
        eg.predicted = doc
    seconds = time.perf_counter() - start
    scores = score_nested(examples, spans_key=spans_key)
    warn_if_nothing_predicted(sum(len(eg.predicted.spans.get(spans_key, [])) for eg in examples),
                              sum(len(eg.reference.spans.get(spans_key, [])) for eg in examples), f"span in doc.spans[{spans_key!r}]")
    trees = "predicted" if parser else "the pipeline's parser" if parses(nlp) and gum is not None else "given"
    return {"model": str(model), "file": str(jsonl or gum), "trees": trees, **extra,
            "words": n_words, "words_per_second": round(n_words / max(seconds, 1e-9), 1),
            **{k.replace(f"spans_{spans_key}_", ""): v for k, v in scores.items()}}
