"""Bridges to the tools teams already use around an evaluation (experiment trackers).

Each bridge imports its tool lazily: ``import noisegauge.integrations`` loads nothing heavy.
"""
