"""Scores of trained pipelines on corpus files: entity P/R/F of a pipeline on
a CoNLL-U + UNER IOB2 pair (gold trees, or a parser's), nested P/R/F on a
GENIA or GUM file, the parser's UAS/LAS, words/s, and per-sentence (TP, FP,
FN) counts for the significance tests. P/R/F and UAS/LAS are fractions
(``metrics``)."""

import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..readers.conllu import sentences_to_doc
from ..readers.uner import DEFAULT_LABELS, UNERCorpus, read_uner_corpus
from ..util.pipelines import load_pipeline
from ..util.progress import progress
from .metrics import prf_from_counts, uas_las
from .significance import item_counts

# The tokens a score is on: the data's own, or the text re-tokenized by the pipeline.
DATA_TOKENS = "the data's own (as spacy evaluate --gold-preproc)"
RETOKENIZED = "the text re-tokenized by the pipeline's tokenizer, gold aligned to it (as spacy evaluate)"


def parses(nlp) -> bool:
    """Whether a component of the pipeline sets dependency trees. Such a
    pipeline is given input Docs without trees: spaCy's parser leaves broken
    trees where it parses over preset heads."""
    return any("token.dep" in nlp.get_pipe_meta(name).assigns for name in nlp.pipe_names)


def require_no_second_parser(nlp, model: Path, parser: Optional[Path]) -> None:
    """A parser given for the trees of a pipeline that parses itself would be overwritten: an error."""
    if parser and parses(nlp):
        raise ValueError(
            f"The pipeline {model} has its own parser (its components: {nlp.pipe_names}), which sets the "
            f"trees it reads: leave out the parser {parser}, or give a pipeline without a parser."
        )


def parse_words(parser_path: Path, sentences, batch_size: int = 256):
    """Docs of (words, spaces, sent_starts) triples parsed by the pipeline at
    ``parser_path``, in its vocab, and that vocab. spaCy's parser respects the
    sentence starts: one root per marked sentence, as in the gold trees."""
    from spacy.tokens import Doc

    parser_nlp = load_pipeline(parser_path)
    if not parses(parser_nlp):
        raise ValueError(
            f"The pipeline {parser_path} has no parser (its components: {parser_nlp.pipe_names}): "
            "give a pipeline with a trained parser as --parser."
        )
    docs = [
        Doc(parser_nlp.vocab, words=words, spaces=spaces, sent_starts=starts) for words, spaces, starts in sentences
    ]
    return list(progress(parser_nlp.pipe(docs, batch_size=batch_size), len(docs), "parse")), parser_nlp.vocab


def parse_sentences(parser_path: Path, sentences, batch_size: int = 256):
    """Docs of CoNLL-U sentences (one per sentence, words only, each marked
    as one sentence, so that no lattice loses spans to a sentence split the
    gold data lacks) parsed by the pipeline at ``parser_path``, and its vocab."""
    return parse_words(
        parser_path, ((s.words, s.spaces, [i == 0 for i in range(len(s.words))]) for s in sentences), batch_size
    )


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


def load_corpus(
    conllu: Path, uner: Path, limit: int = 0, labels: Optional[Sequence[str]] = DEFAULT_LABELS
) -> UNERCorpus:
    """The joined corpus, its entities of the types ``labels`` (None: every
    type), cut to its first ``limit`` sentences (0: all)."""
    return first_sentences(read_uner_corpus(conllu, uner, labels), limit)


def with_vocab(vocab, doc):
    """The Doc's words, spaces and trees in ``vocab`` (an entity pipeline's)."""
    from spacy.tokens import Doc

    return (
        Doc(
            vocab,
            words=[t.text for t in doc],
            spaces=[bool(t.whitespace_) for t in doc],
            heads=[t.head.i for t in doc],
            deps=[t.dep_ for t in doc],
        )
        if len(doc)
        else Doc(vocab, words=[])
    )


def input_docs(vocab, corpus: UNERCorpus, parsed=None, trees: bool = True) -> List:
    """One input Doc per sentence, in ``vocab``: with the gold trees, with
    the trees of ``parsed`` (Docs from ``parse_corpus``), or with ``trees``
    False none (words and the sentence start: for a pipeline with its own parser)."""
    if parsed is None:
        return [sentences_to_doc(vocab, [s], with_trees=trees) for s in corpus.sentences]
    return [with_vocab(vocab, d) for d in parsed]


def without_trees(doc):
    """A copy of the Doc with its words, spaces and sentence starts only."""
    from spacy.tokens import Doc

    starts = [bool(t.is_sent_start) for t in doc] if doc.has_annotation("SENT_START") else None
    return Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc], sent_starts=starts)


def input_doc(reference):
    """The input Doc of a reference Doc: its words and spaces, and its trees
    or else its sentence starts, if it has them."""
    return with_vocab(reference.vocab, reference) if reference.has_annotation("DEP") else without_trees(reference)


def judged_entities(predicted, gold) -> set:
    """(start, end, label) of the predicted Doc's entities that spaCy's Scorer
    judges against the gold Doc (same tokens): none when the gold Doc has no
    entity annotation, and none over a gold token whose annotation is missing
    (such a prediction is neither right nor wrong)."""
    if not gold.has_annotation("ENT_IOB"):
        return set()
    missing = [t.ent_iob == 0 for t in gold]
    return {(e.start, e.end, e.label_) for e in predicted.ents if not any(missing[e.start : e.end])}


def score_docs(nlp, gold_docs, docs, batch_size: int = 256) -> Dict:
    """P/R/F (fractions) overall and per label, words/s and per-Doc (TP, FP,
    FN) of ``nlp`` run on ``docs`` against the entities of ``gold_docs`` (the
    same tokens: the data's own, as ``spacy evaluate --gold-preproc``). The
    rule of spaCy's Scorer (``ents_p``, ...): gold and predicted entities of
    every label, each right when its boundaries and label match a gold one
    (``judged_entities``); ``labels`` lists the labels scored."""
    n_words = sum(len(doc) for doc in docs)
    start = time.perf_counter()
    predicted = list(progress(nlp.pipe([doc.copy() for doc in docs], batch_size=batch_size), len(docs), "evaluate"))
    seconds = time.perf_counter() - start
    gold_sets = entity_sets(gold_docs)
    predicted_sets = [judged_entities(p, g) for p, g in zip(predicted, gold_docs)]
    counts = item_counts(gold_sets, predicted_sets)
    warn_if_nothing_predicted(sum(map(len, predicted_sets)), sum(map(len, gold_sets)), "entity in doc.ents")
    labels = sorted({e[2] for doc_set in gold_sets + predicted_sets for e in doc_set})
    result = prf_from_counts(counts)
    result["per_type"] = {
        label: prf_from_counts(
            item_counts(
                [{e for e in g if e[2] == label} for g in gold_sets],
                [{e for e in p if e[2] == label} for p in predicted_sets],
            )
        )
        for label in labels
    }
    result.update(
        {
            "labels": labels,
            "tokens": DATA_TOKENS,
            "words": n_words,
            "seconds": round(seconds, 3),
            "words_per_second": round(n_words / max(seconds, 1e-9), 1),
            "sentence_counts": counts.tolist(),
        }
    )
    return result


def score_pipeline(nlp, corpus: UNERCorpus, docs, batch_size: int = 256) -> Dict:
    """``score_docs`` of ``nlp`` run on ``docs`` (the corpus's sentences)
    against the corpus's entities (those of the labels it was read with)."""
    gold_docs = [
        sentences_to_doc(nlp.vocab, [s], with_trees=False, ents=tags) for s, tags in zip(corpus.sentences, corpus.tags)
    ]
    return score_docs(nlp, gold_docs, docs, batch_size)


def trees_source(nlp, parser: Optional[Path], data_trees: bool) -> str:
    """Where the trees the pipeline reads come from: "predicted" (the parser
    ``parser``), "the pipeline's parser", "given" (the data's) or "none"."""
    if parser:
        return "predicted"
    return "the pipeline's parser" if parses(nlp) else "given" if data_trees else "none"


def evaluate_pipeline(
    model: Path,
    conllu: Path,
    uner: Path,
    parser: Optional[Path] = None,
    labels: Optional[Sequence[str]] = None,
    batch_size: int = 256,
    limit: int = 0,
) -> Dict:
    """Entity scores (``score_docs``) of the pipeline at ``model`` on the
    corpus, its entities of the types ``labels`` (None: every type), with
    gold trees (``parser`` None) or the trees of the parser pipeline at ``parser``."""

    nlp = load_pipeline(model)
    require_entity_writer(nlp, model)
    corpus = load_corpus(conllu, uner, limit, labels)
    result: Dict = {
        "model": str(model),
        "conllu": str(conllu),
        "uner": str(uner),
        "trees": trees_source(nlp, parser, True),
    }
    require_no_second_parser(nlp, model, parser)
    parsed = None
    if parser:
        parsed, _ = parse_corpus(parser, corpus, batch_size)
        result["parser"] = {"path": str(parser), **attachment_scores(parsed, corpus)}
    docs = input_docs(nlp.vocab, corpus, parsed, trees=trees_given(nlp))
    result.update(score_pipeline(nlp, corpus, docs, batch_size))
    return result


def evaluate_docbin(
    model: Path, path: Path, parser: Optional[Path] = None, batch_size: int = 256, limit: int = 0
) -> Dict:
    """Entity scores (``score_docs``) of the pipeline at ``model`` on the
    ``doc.ents`` of a DocBin file's first ``limit`` Docs (0: all), with the
    Docs' trees if they have them, or those of the parser pipeline at
    ``parser`` (its UAS/LAS reported when the Docs have trees)."""
    from ..readers.docbins import read_reference_docbin

    nlp = load_pipeline(model)
    require_entity_writer(nlp, model)
    require_no_second_parser(nlp, model, parser)
    references = read_reference_docbin(nlp.vocab, path)
    references = references[:limit] if limit else references
    data_trees = bool(references) and all(doc.has_annotation("DEP") for doc in references)
    result: Dict = {"model": str(model), "data": str(path), "trees": trees_source(nlp, parser, data_trees)}
    docs = [input_doc(d) if trees_given(nlp, parser) else without_trees(d) for d in references]
    if parser:
        docs = [with_vocab(nlp.vocab, d) for d in parsed_docs(parser, docs, batch_size)]
        if data_trees:
            result["parser"] = {"path": str(parser), **tree_agreement(docs, references)}
    result.update(score_docs(nlp, references, docs, batch_size))
    return result


def nested_file_examples(
    vocab, jsonl: Optional[Path], gum: Optional[Path], spans_key: str, dependencies: str = "given"
) -> List:
    """Examples of a GENIA file, or of a GUM file with its gold trees in the
    input (``dependencies`` "given") or none ("predicted")."""
    from ..readers.genia import genia_examples, read_genia
    from ..readers.gum import gum_examples, read_gum

    if (jsonl is None) == (gum is None):
        raise ValueError("give one of a GENIA file (jsonl) or a GUM file (gum)")
    if jsonl is not None:
        return genia_examples(vocab, read_genia(jsonl), spans_key)
    return gum_examples(vocab, read_gum(gum), dependencies, spans_key)


def nested_scores(
    model: Path,
    jsonl: Optional[Path] = None,
    gum: Optional[Path] = None,
    parser: Optional[Path] = None,
    spans_key: str = "nested_ner",
    retokenize: bool = False,
) -> Dict:
    """P/R/F (fractions) of nested mentions (overall and per label) and
    words/s of the pipeline at ``model`` on a GENIA file or a GUM file; on
    GUM with the gold trees, or with those of the parser pipeline at
    ``parser`` (its time excluded; its UAS/LAS against the gold trees
    reported). The rule of spaCy's Scorer (mentions of every label, right
    when boundaries and label match a gold one) on the data's own tokens, as
    ``spacy evaluate --gold-preproc``; with ``retokenize`` on the text
    re-tokenized by the pipeline's tokenizer, the gold mentions aligned to
    it, as ``spacy evaluate``. ``labels`` and ``tokens`` say which."""

    from spacy.training import Example

    from .scorers import score_nested

    if parser is not None and gum is None:
        raise ValueError("a parser goes with a GUM file (GENIA has no trees)")
    if parser is not None and retokenize:
        raise ValueError(
            "a parser's trees are on the data's own tokens: leave out the parser, or score the data's "
            "tokens (no --retokenize)"
        )
    nlp = load_pipeline(model)
    require_no_second_parser(nlp, model, parser)
    extra = {}
    examples = nested_file_examples(
        nlp.vocab, jsonl, gum, spans_key, "given" if trees_given(nlp, parser) else "predicted"
    )
    if retokenize:
        examples = [
            eg if eg.reference.has_unknown_spaces else Example(nlp.make_doc(eg.reference.text), eg.reference)
            for eg in examples
        ]  # as spaCy's Corpus: a text of unknown spaces keeps its tokens
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
    for eg, doc in zip(
        examples, progress(nlp.pipe([eg.predicted for eg in examples], batch_size=256), len(examples), "evaluate")
    ):
        eg.predicted = doc
    seconds = time.perf_counter() - start
    scores = {k.replace(f"spans_{spans_key}_", ""): v for k, v in score_nested(examples, spans_key=spans_key).items()}
    warn_if_nothing_predicted(
        sum(len(eg.predicted.spans.get(spans_key, [])) for eg in examples),
        sum(len(eg.reference.spans.get(spans_key, [])) for eg in examples),
        f"span in doc.spans[{spans_key!r}]",
    )
    trees = trees_source(nlp, parser, gum is not None and not retokenize)
    return {
        "model": str(model),
        "file": str(jsonl or gum),
        "trees": trees,
        **extra,
        "labels": sorted(scores.get("per_type") or {}),
        "tokens": RETOKENIZED if retokenize else DATA_TOKENS,
        "words": n_words,
        "words_per_second": round(n_words / max(seconds, 1e-9), 1),
        **scores,
    }
