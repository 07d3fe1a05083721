"""The one evaluator (roofline: work per tier -> time and binding bound) and one module per operator family."""
