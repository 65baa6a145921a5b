"""PNG figures of the searches and the calibration: matplotlib on the
file-only Agg backend, a figure written atomically."""

from pathlib import Path

from ..util.atomic_files import atomic_path


def matplotlib_pyplot():
    """``matplotlib.pyplot`` with the file-only Agg backend, or a ValueError
    that says how to install matplotlib."""
    try:
        import matplotlib
    except ImportError as error:
        raise ValueError(
            "drawing a PNG needs matplotlib, which is not installed: pip install matplotlib "
            '(or pip install "spacy-depner[project]"), or leave out the PNG option'
        ) from error
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(figure, path: Path) -> Path:
    """Write a matplotlib figure to the PNG ``path`` atomically and close it."""
    plt = matplotlib_pyplot()
    path = Path(path)
    try:
        with atomic_path(path) as temporary:
            figure.savefig(temporary, dpi=100, format="png")
    finally:
        plt.close(figure)
    return path
