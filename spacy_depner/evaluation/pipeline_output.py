"""A tuned pipeline written out: the output path checked before the work,
the pipeline saved atomically with a setting in its component's config."""

from pathlib import Path
from typing import Dict

from ..util.atomic_files import atomic_path


def check_output(output: Path) -> None:
    """A ValueError when ``output`` is a file, or a non-empty folder that is
    not a saved pipeline (it would be replaced)."""
    output = Path(output)
    if output.is_file() or (output.is_dir() and any(output.iterdir()) and not (output / "config.cfg").is_file()):
        raise ValueError(
            f"OUTPUT {output} exists and is not a saved pipeline (no config.cfg): choose another path, or move it away"
        )


def save_pipeline(nlp, name: str, settings: Dict[str, object], output: Path) -> None:
    """Write ``settings`` to the component's config (what ``nlp.config`` and
    config.cfg show, read again at load) and save the pipeline to ``output``
    atomically (a temporary folder renamed, replacing a pipeline there,
    which may be the one loaded)."""
    config = nlp.get_pipe_config(name)
    for key, value in settings.items():
        config[key] = value
    with atomic_path(output) as temporary:
        nlp.to_disk(temporary)
