"""Experiments: sweeps, result store, the reproductions catalogue and plotting."""
