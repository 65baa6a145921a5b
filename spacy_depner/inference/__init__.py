"""Corpus-scale inference: a trained pipeline run over a corpus cut into shards, on several
processes (``annotating.annotate_corpus``, the ``apply`` command; ``ranking.rank_corpus``,
``rank``) or on Ray actors (``ray_data.ray_annotate``, ``apply-ray``; ray is imported only when
it is called), to one JSONL file, one DocBin or DocBin shards."""

from ..util.pipelines import pipeline_location
from .annotating import annotate_corpus
from .corpus import doc_record, input_kind, read_input
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
