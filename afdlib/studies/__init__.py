"""The chapters' studies, beside the report: the sweet-spot and Table-3 studies, the modern-MoE study,
the validation chapter's readings and the imbalance study, each built on the model
(:mod:`afdlib.decode`) and the decision (:mod:`afdlib.decision`)."""
