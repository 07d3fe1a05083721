"""Inputs: the vocabulary (Hardware, Model, Precision, Budget, Efficiency), the catalogues, user files and Hugging Face configs."""
