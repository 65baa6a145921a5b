"""Copies of the test fixtures laid out as a larger corpus, for the workflow tests."""
import re

def replicate(text: str, copies: int) -> str:
    """The sentences of a CoNLL-U or IOB2 text ``copies`` times, with new sent_ids."""
    blocks = [b for b in text.strip().split("\n\n") if b.strip()]
    out = []
    for k in range(copies):
        for block in blocks:
            out.append(re.sub(r"# sent_id = (\S+)", lambda m: f"# sent_id = {m.group(1)}-{k}", block))
    return "\n\n".join(out) + "\n\n"


def replicate_conllu(text: str, copies: int) -> str:
    """The documents of a CoNLL-U text ``copies`` times, with new doc and sent ids."""
    out = []
    for k in range(copies):
        out.append(re.sub(r"# (newdoc id|sent_id) = (\S+)", lambda m: f"# {m.group(1)} = {m.group(2)}-{k}", text.strip()))
    return "\n\n".join(out) + "\n\n"
