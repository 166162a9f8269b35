"""Reproductions of the papers' figures; every module here registers its entries with `cclab.experiments.catalogue.reproduction`."""
