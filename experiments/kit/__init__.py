"""The shared kit of the studies: runs of ``spacy train`` (``runs``), training seeds (``seeds``, ``seed_tests``),
markdown tables (``tables``), written outputs (``outputs``), timing (``timing``), the command-line options
several studies share (``options``) and where a data directory's files lie (``data_files``)."""
