"""The report: figures and their style, notebook parameters, and the book build."""
