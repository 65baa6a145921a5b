"""Models served to annotation tools: a thin web layer over ``inference/``
(above it and ``readers/``, below ``cli/``). ``label_studio_backend``
implements Label Studio's ML backend protocol."""
