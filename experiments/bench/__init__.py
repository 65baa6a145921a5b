"""The speed benchmarks (``python -m experiments bench``, ``bench-nested``, ``bench-types``,
``bench-stages``, ``bench-structures``): every figure a ratio against a baseline timed in the same run."""
