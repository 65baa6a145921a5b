"""``python -m experiments jackknife-trees``: the training split of UD
English-EWT with a parser's trees in place of the gold ones, by k-fold
jackknifing, so that a tree-reading model trains on trees like those it is
tested on.

The training documents are dealt into ``folds`` folds (document i in fold
i % folds, as the two-stage cross-validation deals them); for each fold a
parser (configs/parser_ewt.cfg) is trained on the other folds and parses the
fold's sentences. The result, OUTPUT/train.jackknife.conllu, is the training
CoNLL-U file with every sentence's HEAD and DEPREL replaced by the
prediction of the parser that did not see it (DEPS set to "_"); the
entities file is unchanged, joined by sentence id. Train a model on it with
``--paths.train_conllu OUTPUT/train.jackknife.conllu``.
"""

import json
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

import typer

from spacy_depner.readers.documents import fold_indices
from spacy_depner.util.atomic_files import atomic_path

from ..kit.data_files import data_file
from ..kit.options import CONFIGS, DATA, JOBS
from ..kit.runs import run_all, train_command

Block = Tuple[str, str, List[str]]  # (document id, sentence id, lines)


def conllu_blocks(path: Path) -> List[Block]:
    """The sentences of a CoNLL-U or IOB2 file as blocks of lines, each with the
    id of its document (the last ``# newdoc id``) and its ``# sent_id``."""
    blocks, document, lines = [], "", []
    for line in path.read_text(encoding="utf8").splitlines() + [""]:
        if line.strip():
            lines.append(line)
            continue
        if lines:
            for comment in lines:
                if comment.startswith("# newdoc id"):
                    document = comment.split("=", 1)[1].strip()
            sent_id = next((c.split("=", 1)[1].strip() for c in lines if c.startswith("# sent_id")), "")
            blocks.append((document, sent_id, lines))
            lines = []
    return blocks


def first_blocks(blocks: List[Block], limit: int) -> List[Block]:
    """The first ``limit`` blocks (0: all), as ``--corpora.train.limit`` cuts the other steps' training split."""
    if limit < 0:
        raise typer.BadParameter(f"--limit must be 0 (all) or more, not {limit}")
    return blocks[:limit] if limit else blocks


def document_folds(blocks: Sequence[Block], folds: int) -> List[int]:
    """The fold of each block: documents in order of first appearance, document i in fold i % folds."""
    order: Dict[str, int] = {}
    for document, _, _ in blocks:
        order.setdefault(document, len(order))
    fold_of = {}
    for fold in range(folds):
        for i in fold_indices(len(order), folds, only_fold=fold):
            fold_of[i] = fold
    return [fold_of[order[document]] for document, _, _ in blocks]


def write_blocks(path: Path, blocks: Sequence[Block]) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text("".join("\n".join(lines) + "\n\n" for _, _, lines in blocks), encoding="utf8")


def with_trees(lines: List[str], heads: Sequence[int], deprels: Sequence[str]) -> List[str]:
    """The CoNLL-U lines of a sentence with the words' HEAD (``heads``: index of
    the head word in the sentence, or the word itself for a root) and DEPREL
    replaced and DEPS set to "_"; multiword-token and empty-node lines unchanged."""
    words = sum(1 for line in lines if not line.startswith("#") and line.split("\t")[0].isdigit())
    if words != len(heads) or words != len(deprels):
        raise ValueError(f"sentence has {words} words but the parse has {len(heads)} tokens")
    out, word = [], 0
    for line in lines:
        columns = line.split("\t")
        if line.startswith("#") or not columns[0].isdigit():
            out.append(line)
            continue
        head = heads[word]
        columns[6] = "0" if head == word else str(head + 1)
        columns[7] = "root" if head == word else deprels[word]
        columns[8] = "_"
        out.append("\t".join(columns))
        word += 1
    return out


def jackknife(
    data: Path = DATA,
    configs: Path = CONFIGS,
    output: Path = typer.Option(..., help="Folder for the fold files, the parsers and train.jackknife.conllu"),
    folds: int = typer.Option(5, help="Number of folds"),
    steps: int = typer.Option(3000, help="Training steps of each fold's parser"),
    jobs: int = JOBS,
    limit: int = typer.Option(
        0,
        help="Train and dev sentences (0: all), as the study's other steps: only the first "
        "LIMIT training sentences are dealt into folds, parsed and written",
    ),
) -> None:
    """Train a parser per fold on the other folds and write the training split with their trees."""
    from spacy_depner.evaluation.corpus_scores import attachment_scores, load_corpus, parse_corpus

    if folds < 2:
        raise typer.BadParameter(f"--folds must be at least 2, not {folds}")
    conllu, iob2 = data_file(data, "train", "conllu"), data_file(data, "train", "iob2")
    sentences = first_blocks(conllu_blocks(conllu), limit)
    kept = {sent_id for _, sent_id, _ in sentences}
    tagged = [b for b in conllu_blocks(iob2) if b[1] in kept]
    fold_of = document_folds(sentences, folds)
    sent_fold = {sent_id: fold for (_, sent_id, _), fold in zip(sentences, fold_of)}
    runs = {}
    for fold in range(folds):
        for kind, blocks in (("conllu", sentences), ("iob2", tagged)):
            for part, keep in (
                ("without", lambda s: sent_fold.get(s) != fold),
                ("only", lambda s: sent_fold.get(s) == fold),
            ):
                write_blocks(output / "folds" / f"train_{part}_{fold}.{kind}", [b for b in blocks if keep(b[1])])
        runs[f"parser_{fold}"] = train_command(
            configs / "parser_ewt.cfg",
            output / f"parser_{fold}",
            data,
            steps,
            limit,
            [
                "--paths.train_conllu",
                str(output / "folds" / f"train_without_{fold}.conllu"),
                "--paths.train_iob2",
                str(output / "folds" / f"train_without_{fold}.iob2"),
            ],
        )
    run_all(runs, output, jobs, steps=steps, folds=folds, limit=limit)
    parsed_lines, scores = {}, {}
    for fold in range(folds):
        corpus = load_corpus(
            output / "folds" / f"train_only_{fold}.conllu", output / "folds" / f"train_only_{fold}.iob2"
        )
        docs, _ = parse_corpus(output / f"parser_{fold}" / "model-best", corpus)
        scores[fold] = attachment_scores(docs, corpus)
        held_out = [b for b in sentences if sent_fold[b[1]] == fold]
        for (_, sent_id, lines), doc in zip(held_out, docs):
            parsed_lines[sent_id] = with_trees(lines, [t.head.i - doc[0].i for t in doc], [t.dep_.lower() for t in doc])
    write_blocks(output / "train.jackknife.conllu", [(d, s, parsed_lines[s]) for d, s, _ in sentences])
    write_blocks(output / "train.jackknife.iob2", tagged)  # the entities of the same (limited) sentences
    report = {
        "folds": folds,
        "steps": steps,
        "limit": limit,
        "sentences": len(sentences),
        "attachment_per_fold": scores,
    }
    with atomic_path(output / "jackknife.json") as temporary:
        temporary.write_text(json.dumps(report, indent=2), encoding="utf8")
    typer.echo(json.dumps(report, indent=2))
