"""Inputs: the vocabulary (Hardware, Model, Precision, Budget, Efficiency), the checks of numbers and names, the catalogues, user files and Hugging Face configs."""
