"""``python -m spacy_depner evaluate`` and ``evaluate-nested``: score a
trained pipeline on corpus files. P/R/F and UAS/LAS are fractions (spaCy's unit)."""

import json
from pathlib import Path
from typing import Optional

import typer

from ..evaluation.corpus_scores import evaluate_docbin, evaluate_pipeline, nested_scores
from ..evaluation.data_files import data_kind
from ..readers.genia import read_genia
from ..util.atomic_files import atomic_path
from .arguments import (
    IOB2_HELP,
    NESTED_HELP,
    PARSER_HELP,
    PIPELINE_HELP,
    import_code,
    nested_data,
    spacy_options,
    use_gpu,
)

FLAT = spacy_options(
    "JSON file to write, with per-sentence (TP, FP, FN) counts (default: print only)",
    "Score on the data's own tokens, as `spacy evaluate --gold-preproc` (the default: flat entities are scored "
    "on them only; --retokenize is evaluate-nested's)",
)
NESTED = spacy_options(
    "JSON file to write (default: print only)",
    "Score on the data's own tokens, as `spacy evaluate --gold-preproc` (the default); --retokenize: on the text "
    "re-tokenized by the pipeline's tokenizer, the gold mentions aligned to it, as `spacy evaluate` (and spacy "
    "train's dev scores)",
)
SCORING = (
    "Scored as spaCy's Scorer does: the gold and predicted {what} of every label, right when boundaries "
    'and label match; the output names the labels ("labels") and the tokens ("tokens") scored.'
)


def evaluate(
    pipeline: str = typer.Argument(..., metavar="PIPELINE", help=PIPELINE_HELP),
    data: Path = typer.Argument(
        ...,
        metavar="DATA",
        help=".conllu (UD CoNLL-U: words, gold trees; its entities "
        "in --iob2) or .spacy (DocBin: the entities in doc.ents)",
    ),
    output: Optional[Path] = FLAT["output"],
    code: Optional[Path] = FLAT["code"],
    gpu_id: int = FLAT["gpu_id"],
    gold_preproc: bool = FLAT["gold_preproc"],
    iob2: Optional[Path] = typer.Option(None, help=IOB2_HELP),
    parser: Optional[str] = typer.Option(None, help=PARSER_HELP),
    limit: int = typer.Option(0, help="Score only the first LIMIT sentences, or Docs of a DocBin (0: all)"),
) -> None:
    """Score flat entities (CoNLL-U + IOB2 or DocBin): P/R/F.

    Prints P/R/F overall and per label, words/s, and with --parser that
    parser's UAS/LAS; --output also holds the per-sentence (TP, FP, FN)
    counts that the significance tests read. Every entity type of the IOB2
    file is read. {scoring} Tokens: the data's own, as `spacy evaluate
    --gold-preproc`. The options of `spacy evaluate` have its names."""
    if not gold_preproc:
        raise typer.BadParameter(
            "--retokenize: flat entities are scored on the data's own tokens only (-G, the default); "
            "evaluate-nested --retokenize scores re-tokenized text"
        )
    kind = data_kind(data, iob2)
    import_code(code)
    use_gpu(gpu_id)
    if kind == "uner":
        result = evaluate_pipeline(pipeline, data, iob2, parser, labels=None, limit=limit)
    elif kind == "docbin":
        result = evaluate_docbin(pipeline, data, parser, limit=limit)
    elif kind == "gum":
        raise ValueError(
            f"DATA {data} is a .conllu file without --iob2: give --iob2 FILE with its UNER entities "
            "(for the nested mentions of UD English-GUM use evaluate-nested)"
        )
    else:
        read_genia(data)  # a file of plain text is refused here, as having no annotations
        raise ValueError(f"DATA {data} is GENIA JSON lines, nested mentions: score them with evaluate-nested")
    summary = {k: v for k, v in result.items() if k != "sentence_counts"}
    if output:
        with atomic_path(output) as temporary:
            temporary.write_text(json.dumps(result), encoding="utf8")
    typer.echo(json.dumps(summary, indent=2))


evaluate.__doc__ = evaluate.__doc__.format(scoring=SCORING.format(what="entities"))


def evaluate_nested(
    pipeline: str = typer.Argument(
        ..., metavar="PIPELINE", help=PIPELINE_HELP + " that writes doc.spans[--spans-key] (nested_ner, spancat, ...)"
    ),
    data: Path = typer.Argument(..., metavar="DATA", help=NESTED_HELP),
    output: Optional[Path] = NESTED["output"],
    code: Optional[Path] = NESTED["code"],
    gpu_id: int = NESTED["gpu_id"],
    gold_preproc: bool = NESTED["gold_preproc"],
    spans_key: str = typer.Option("nested_ner", "--spans-key", "-sk", help="Span group of the mentions"),
    parser: Optional[str] = typer.Option(None, help=PARSER_HELP + " (GUM only: GENIA has no trees)"),
) -> None:
    """Score nested mentions on GENIA or GUM: P/R/F, words/s.

    On GUM with its gold trees, or with --parser's (its time excluded, its
    UAS/LAS reported). {scoring} Tokens: the data's own, as `spacy evaluate
    --gold-preproc` (the default), or with --retokenize the text re-tokenized
    as `spacy evaluate` does and the own-data configs train on it. The
    options of `spacy evaluate` have its names."""
    jsonl, gum = nested_data(data)
    if parser is not None and gum is None:
        raise typer.BadParameter(f"--parser goes with a GUM .conllu DATA: GENIA ({data}) has no trees")
    if parser is not None and not gold_preproc:
        raise typer.BadParameter("--parser's trees are on the data's own tokens: leave out --parser or --retokenize")
    import_code(code)
    use_gpu(gpu_id)
    result = nested_scores(pipeline, jsonl, gum, parser, spans_key, retokenize=not gold_preproc)
    if output:
        with atomic_path(output) as temporary:
            temporary.write_text(json.dumps(result, indent=2), encoding="utf8")
    typer.echo(json.dumps(result, indent=2))


evaluate_nested.__doc__ = evaluate_nested.__doc__.format(scoring=SCORING.format(what="mentions"))
