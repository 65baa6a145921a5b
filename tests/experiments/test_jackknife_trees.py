"""The jackknifed training trees: fold files by document and the CoNLL-U
lines rewritten with a parse."""

import pytest

from experiments.dgm.jackknife_trees import conllu_blocks, document_folds, with_trees

CONLLU = """# newdoc id = a
# sent_id = a-1
1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
1\tdo\tdo\tAUX\t_\t_\t3\taux\t3:aux\t_
2\tn't\tnot\tPART\t_\t_\t3\tadvmod\t3:advmod\t_
3\tgo\tgo\tVERB\t_\t_\t0\troot\t0:root\t_

# sent_id = a-2
1\tYes\tyes\tINTJ\t_\t_\t0\troot\t0:root\t_

# newdoc id = b
# sent_id = b-1
1\tNo\tno\tINTJ\t_\t_\t0\troot\t0:root\t_

# newdoc id = c
# sent_id = c-1
1\tOK\tok\tINTJ\t_\t_\t0\troot\t0:root\t_
"""


def test_blocks_carry_their_document_and_sentence_ids(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text(CONLLU)
    blocks = conllu_blocks(path)
    assert [(d, s) for d, s, _ in blocks] == [("a", "a-1"), ("a", "a-2"), ("b", "b-1"), ("c", "c-1")]
    assert len(blocks[0][2]) == 6


def test_documents_are_dealt_round_robin_and_keep_their_sentences_together(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text(CONLLU)
    assert document_folds(conllu_blocks(path), 2) == [0, 0, 1, 0]  # documents a, b, c -> folds 0, 1, 0


def test_trees_are_replaced_word_by_word_and_multiword_lines_kept(tmp_path):
    path = tmp_path / "x.conllu"
    path.write_text(CONLLU)
    lines = conllu_blocks(path)[0][2]
    out = with_trees(lines, [1, 1, 1], ["x", "y", "z"])  # word 1 ("n't") is the root
    assert out[:3] == lines[:3]
    assert out[3].split("\t")[6:9] == ["2", "x", "_"]
    assert out[4].split("\t")[6:9] == ["0", "root", "_"]
    assert out[5].split("\t")[6:9] == ["2", "z", "_"]
    assert out[3].split("\t")[:6] == lines[3].split("\t")[:6]
    with pytest.raises(ValueError, match="3 words but the parse has 2"):
        with_trees(lines, [0, 0], ["root", "x"])


@pytest.mark.slow
def test_limit_jackknifes_only_the_first_training_sentences(tmp_path):
    """With --limit the folds' parsers train on the first LIMIT sentences only and
    the jackknifed file holds those sentences, as the study's other steps read them."""
    import json

    from corpus_copies import ROOT, TESTS, replicate_conllu, write_ewt

    from experiments.dgm.jackknife_trees import jackknife

    data = tmp_path / "data"
    write_ewt(data, {"train": 32, "dev": 2})
    # 32 documents (tiny.conllu's, copied): the first half still gives each fold's parser every label often enough
    # (spaCy's parser keeps the labels seen 30 times; with fewer it finds no gold move)
    (data / "ud_ewt" / "r2.9" / "en_ewt-ud-train.conllu").write_text(
        replicate_conllu((TESTS / "data" / "tiny.conllu").read_text(), 32)
    )
    full = len(conllu_blocks(data / "ud_ewt" / "r2.9" / "en_ewt-ud-train.conllu"))
    limit = full // 2
    jackknife(data=data, configs=ROOT / "configs", output=tmp_path / "out", folds=2, steps=2, jobs=2, limit=limit)
    written = conllu_blocks(tmp_path / "out" / "train.jackknife.conllu")
    assert len(written) == limit < full
    folds = [conllu_blocks(tmp_path / "out" / "folds" / f"train_only_{fold}.conllu") for fold in (0, 1)]
    assert sum(map(len, folds)) == limit and all(folds)
    report = json.loads((tmp_path / "out" / "jackknife.json").read_text())
    assert (report["limit"], report["sentences"]) == (limit, limit)
    # the twin trains on these trees with the entities of the same sentences: the two files join
    entities = conllu_blocks(tmp_path / "out" / "train.jackknife.iob2")
    assert sorted(b[1] for b in entities) == sorted(b[1] for b in written)
    from spacy_depner.evaluation.corpus_scores import load_corpus

    assert (
        len(
            load_corpus(
                tmp_path / "out" / "train.jackknife.conllu", tmp_path / "out" / "train.jackknife.iob2"
            ).sentences
        )
        == limit
    )
