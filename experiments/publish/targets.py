"""The transformer page's targets that its run could not compute, from the
published pages: a target compares a model on the transformer with a model on
the CNN; when the transformer run's folders lacked the CNN's results (the
page says "not measured"), the CNN figure is taken from the page of the study
that measured it (GENIA's nested_ner on its own recipe: nested.md), and the
line says which page gave it."""

from pathlib import Path
from typing import Dict, List, Optional

from ..transformers.report import GENIA, NOT_MEASURED, TARGETS, target_line
from .summary import first_number, markdown_tables

TRANSFORMER_PAGE = "transformers"
# the other published pages that hold a model of TARGETS on the CNN: {corpus on the transformer page: (page, corpus)}
CNN_PAGES = {"GENIA": ("nested", "genia")}


def _f(page_text: str, corpus: str, title: str, transformer: bool) -> Optional[float]:
    """Test F of the first row of ``title`` for ``corpus`` in the page's tables (with ``transformer``, of a row
    whose encoder is not the CNN)."""
    for table in markdown_tables(page_text):
        for row in table:
            if row.get("corpus") == corpus and row.get("model") == title and "test F" in row:
                if not transformer or row.get("encoder") not in (None, "cnn"):
                    return first_number(row["test F"])
    return None


def filled_targets(docs_results: Path) -> List[str]:
    """Rewrite the transformer page's targets that say "not measured" where the published pages hold both
    figures; messages of what was filled."""
    path = docs_results / f"{TRANSFORMER_PAGE}.md"
    if not path.is_file():
        return []
    text, done = path.read_text(encoding="utf8"), []
    pages: Dict[str, str] = {}
    for title, models, better, worse, worse_encoder, gap in TARGETS:
        line = f"- {title}: {NOT_MEASURED}"
        corpus = "GENIA" if models is GENIA else "UNER EWT"
        if line not in text or worse_encoder != "cnn" or corpus not in CNN_PAGES:
            continue
        titles = {name: model_title for _, name, model_title, _ in models}
        page, page_corpus = CNN_PAGES[corpus]
        if page not in pages:
            source = docs_results / f"{page}.md"
            pages[page] = source.read_text(encoding="utf8") if source.is_file() else ""
        a = _f(text, corpus, titles[better], transformer=True)
        b = _f(pages[page], page_corpus, titles[worse], transformer=False)
        if a is not None and b is not None:
            text = text.replace(
                line, target_line(title, a, b, gap, f"the second figure from {page}.md, that study's own encoder")
            )
            done.append(f"{path}: target {title!r} from {page}.md")
    if done:
        path.write_text(text, encoding="utf8")
    return done
