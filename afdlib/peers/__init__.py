"""Peers: the side-by-side with NVIDIA aiconfigurator."""
