"""Plumbing shared by judges and stress pipelines: robust remote calls and the on-disk store."""
