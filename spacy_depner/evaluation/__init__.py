"""Evaluation (library): one P/R/F and UAS/LAS (``metrics``), significance
tests, coverage of the search spaces, corpus scores and the mention-penalty
search of ``hypergraph_ner``. Imports the layers below it, never the command
line or the experiments."""
