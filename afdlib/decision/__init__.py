"""The decision, above the model of a deployment (:mod:`afdlib.decode`): the verdict's uncertainty and
the AFD / EP ratio's error on published head-to-heads, when a verdict is decided, the verdict over SLOs,
``afd advise``, the ratio maps over hardware and model axes (sweet spots) and the overlap what-ifs."""
