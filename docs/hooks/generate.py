"""MkDocs hooks: the pages generated at build time from the repository itself.

* ``index.md``: the repository's README.md (``readme_page``);
* ``cli.md``: the help of ``python -m spacy_depner``'s commands (``cli_page``), in
  place of the short page of that name in the repository;
* ``results/index.md``: the overview of the results pages that
  ``python -m experiments publish-results`` wrote into docs/results/ (it
  writes the overview there too), which also go into the navigation, each
  with a title of its own (``experiments/publish/site_pages.py``);
* in any page, ``<!-- settings: COMPONENT -->`` and ``<!-- architectures -->``
  become tables read from the package (``settings_tables``), and
  ``<!-- speeds: BENCHMARK -->`` the rows of that benchmark from the one
  table of words/s on the speed page (``speed_rows``).
"""

import sys
from pathlib import Path

HOOKS = Path(__file__).resolve().parent
ROOT = HOOKS.parents[1]
# This checkout's package and these modules, before any installed copy.
sys.path[:0] = [str(HOOKS), str(ROOT)]

from cli_page import cli_markdown  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402
from readme_page import readme_markdown  # noqa: E402
from settings_tables import fill_markers  # noqa: E402
from speed_rows import fill_speed_markers  # noqa: E402

from experiments.publish.site_pages import RESULTS, results_index, results_pages  # noqa: E402


def on_config(config):
    """The published results pages in the navigation, under Results."""
    pages = results_pages(Path(config["docs_dir"]))
    for section in config["nav"] or []:
        if isinstance(section, dict) and "Results" in section:
            section["Results"] = [{"Overview": f"{RESULTS}/index.md"}] + [{title: path} for title, path in pages]
    return config


def on_files(files, config):
    docs_dir = Path(config["docs_dir"])
    generated = {
        "index.md": readme_markdown(ROOT / "README.md"),
        "cli.md": cli_markdown(),
        f"{RESULTS}/index.md": results_index(results_pages(docs_dir)),
    }
    for src_uri, content in generated.items():
        existing = files.get_file_from_path(src_uri)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, src_uri, content=content))
    return files


def on_page_markdown(markdown, page, config, files):
    return fill_speed_markers(fill_markers(markdown), page.file.src_uri)
