"""The model of a deployment: the decode step of EP and AFD, their batch and deployment searches, and the
validation against published deployments. The decision built on it is :mod:`afdlib.decision`."""
