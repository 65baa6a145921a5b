"""Utilities of every layer: atomic output files (util.atomic_files), numbered lines of text
files for FILE:LINE errors (util.text_lines), the one progress bar (util.progress)."""
