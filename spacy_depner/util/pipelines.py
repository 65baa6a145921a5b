"""One way to name a trained pipeline on the command line and in the
library: a saved directory (``nlp.to_disk``, spacy train's ``model-best``)
or the name of an installed pipeline package, as ``spacy.load`` takes it."""

from pathlib import Path
from typing import Union

from spacy.util import is_package


def pipeline_location(pipeline: Union[str, Path]) -> str:
    """The absolute path of a saved pipeline directory, or the name of an
    installed pipeline package; anything else is a ValueError that says which."""
    if Path(pipeline).is_dir():
        if not (Path(pipeline) / "config.cfg").is_file():
            found = sorted(str(p.parent) for p in Path(pipeline).glob("*/config.cfg"))
            raise ValueError(
                f"PIPELINE {pipeline} is a directory but no saved pipeline (it has no config.cfg)"
                + (f"; its subdirectories {', '.join(found[:3])} are" if found else "")
                + ": give a saved pipeline, e.g. spacy train's OUTPUT/model-best"
            )
        return str(Path(pipeline).resolve())
    if is_package(str(pipeline)):
        return str(pipeline)
    raise ValueError(
        f"PIPELINE {pipeline} is neither a directory nor an installed package: give a saved "
        "pipeline (nlp.to_disk, or spacy train's model-best) or the name of an installed one"
    )


def load_pipeline(pipeline: Union[str, Path], **options):
    """``spacy.load`` of a saved directory or an installed package (``pipeline_location``);
    ``options`` go to ``spacy.load`` (e.g. ``config`` overrides)."""
    import spacy

    return spacy.load(pipeline_location(pipeline), **options)
