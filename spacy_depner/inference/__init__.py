"""Corpus-scale inference: a trained pipeline streamed over a corpus to one JSONL file or DocBin
shards, in one process (``corpus.annotate_corpus``, the ``apply`` command) or on Ray Data
(``ray_data.ray_annotate``, ``apply-ray``; ray is imported only when it is called)."""

from ..util.pipelines import pipeline_location
from .corpus import annotate_corpus, doc_record, input_kind, read_input
from .ray_data import PipelineAnnotator, ray_annotate

__all__ = [
    "annotate_corpus",
    "doc_record",
    "input_kind",
    "pipeline_location",
    "read_input",
    "PipelineAnnotator",
    "ray_annotate",
]
