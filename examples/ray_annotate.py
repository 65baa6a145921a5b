"""Annotate a corpus with a spacy-depner pipeline on Ray Data.

Run as is (needs ``pip install "spacy-depner[ray]"``): it saves a small
untrained demo pipeline (blank English + dgm_ner over all spans, no parser)
and a demo JSONL corpus to a temporary folder, starts a local Ray instance,
and annotates the corpus twice:

1. with ``ray_annotate``, which writes the same JSONL file as
   ``python -m spacy_depner apply`` would, in input order;
2. composed by hand from Ray Data parts (``read_text`` -> ``map_batches`` with
   the ``PipelineAnnotator`` actor), the starting point for other sinks
   (e.g. ``write_parquet`` to a bucket) when one output file is not wanted.

With your own pipeline and corpus:

    python examples/ray_annotate.py --pipeline training/model-best \\
        --input corpus.jsonl --output annotated.jsonl --actors 4

and on a cluster, ``--address auto`` (or RAY_ADDRESS) with a pipeline and a
corpus that every node can read.
"""

import argparse
import json
import tempfile
from pathlib import Path

import ray
import spacy

from spacy_depner.inference import PipelineAnnotator, pipeline_location, ray_annotate

DEMO_TEXTS = [
    "Lee Ann Womack won Single of the Year award",
    "John Smith visited New York",
    "Mary lives in Paris",
    "Paris loves Mary Smith",
]


def demo_pipeline(path: Path) -> Path:
    """An untrained blank English pipeline with dgm_ner (every span up to 4 tokens, labels PER/LOC/MISC)."""
    nlp = spacy.blank("en")
    ner = nlp.add_pipe(
        "dgm_ner", config={"suggester": {"@misc": "spacy_depner.all_spans_suggester.v1", "max_length": 4}}
    )
    for label in ("PER", "LOC", "MISC"):
        ner.add_label(label)
    nlp.initialize()
    nlp.to_disk(path)
    return path


def demo_corpus(path: Path, copies: int = 50) -> Path:
    """``copies`` rounds of the demo texts as JSONL, each with an ``id`` kept as metadata."""
    with open(path, "w", encoding="utf8") as file:
        for i in range(copies * len(DEMO_TEXTS)):
            file.write(json.dumps({"id": i, "text": DEMO_TEXTS[i % len(DEMO_TEXTS)]}) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pipeline", help="trained pipeline (default: an untrained demo pipeline)")
    parser.add_argument("--input", help=".txt or .jsonl corpus (default: a demo corpus)")
    parser.add_argument("--output", help=".jsonl output (default: in a temporary folder)")
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--address", default=None, help="Ray cluster address (default: a local Ray instance)")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="ray_annotate_"))
    pipeline = args.pipeline or str(demo_pipeline(folder / "pipeline"))
    corpus = args.input or str(demo_corpus(folder / "corpus.jsonl"))
    output = Path(args.output or folder / "annotated.jsonl")

    ray.init(address=args.address, include_dashboard=False)
    try:
        # 1. the whole run: one JSONL file, as `python -m spacy_depner apply` writes it
        summary = ray_annotate(pipeline, corpus, output, actors=args.actors, batch_size=args.batch_size, overwrite=True)
        print(json.dumps(summary, indent=2))
        print(output.read_text(encoding="utf8").splitlines()[0])

        # 2. the same actor in a Ray Data program of your own (plain text lines: no metadata)
        texts = folder / "texts.txt"
        texts.write_text("\n".join(DEMO_TEXTS) + "\n", encoding="utf8")
        records = ray.data.read_text(str(texts)).map_batches(
            PipelineAnnotator,
            fn_constructor_kwargs={"pipeline": pipeline_location(pipeline), "batch_size": 64},
            batch_size=64,
            batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=1),
        )
        for row in records.take(2):
            record = json.loads(row["json"])
            print(record["text"], "->", [(ent["text"], ent["label"]) for ent in record["ents"]])
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
