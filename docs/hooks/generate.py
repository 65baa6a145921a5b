"""MkDocs hooks: the pages generated at build time from the repository itself.

* ``index.md``: the repository's README.md (``readme_page``);
* ``cli.md``: the help of ``python -m spacy_depner``'s commands (``cli_page``);
* ``results/index.md``: an overview of the results pages that
  ``python -m experiments publish-results`` wrote into docs/results/, which
  also go into the navigation;
* in any page, ``<!-- settings: COMPONENT -->`` and ``<!-- architectures -->``
  become tables read from the package (``settings_tables``).
"""

import re
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

RESULTS = "results"


def _results_pages(docs_dir: Path) -> list:
    """(title, path inside docs/) of every published results page, by file name."""
    pages = []
    for path in sorted((docs_dir / RESULTS).glob("*.md")):
        if path.name != "index.md":
            heading = re.search(r"^# (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
            title = heading.group(1).split(" (")[0].strip() if heading else path.stem  # without its run details
            pages.append((title, f"{RESULTS}/{path.name}"))
    return pages


def _results_index(pages: list) -> str:
    lines = [
        "# Results",
        "",
        '!!! note "Generated"',
        "    Each page below is a workflow's own report, copied by `python -m experiments publish-results "
        "METRICS docs/results` (project.yml: `spacy project run publish-results`) from the last real run; "
        "this overview is generated at build time. Do not edit them by hand: run the workflow, then publish.",
        "",
    ]
    lines += [f"- [{title}]({path.removeprefix(RESULTS + '/')})" for title, path in pages]
    if not pages:
        lines.append("No results have been published yet.")
    return "\n".join(lines) + "\n"


def on_config(config):
    """The published results pages in the navigation, under Results."""
    pages = _results_pages(Path(config["docs_dir"]))
    for section in config["nav"] or []:
        if isinstance(section, dict) and "Results" in section:
            section["Results"] = [{"Overview": f"{RESULTS}/index.md"}] + [{title: path} for title, path in pages]
    return config


def on_files(files, config):
    docs_dir = Path(config["docs_dir"])
    generated = {
        "index.md": readme_markdown(ROOT / "README.md"),
        "cli.md": cli_markdown(),
        f"{RESULTS}/index.md": _results_index(_results_pages(docs_dir)),
    }
    for src_uri, content in generated.items():
        existing = files.get_file_from_path(src_uri)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, src_uri, content=content))
    return files


def on_page_markdown(markdown, page, config, files):
    return fill_markers(markdown)
