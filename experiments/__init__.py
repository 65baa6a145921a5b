"""The experiments of ``project.yml``: the DGM study, the nested-mention
study, the two-stage study, their reports and the speed benchmarks. Run from
the repository root as ``python -m experiments <command>``; they import the
``spacy_depner`` library and are never imported by it (nor shipped with it)."""
