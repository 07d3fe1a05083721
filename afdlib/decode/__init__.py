"""Whole deployments: the decode step of EP and AFD, the searches, the advice, the sweet spots and the validation."""
