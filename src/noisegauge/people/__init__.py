"""People-checked numbers: labels made on a local review page (``noisegauge review``), people's
per-sample metric values from them, and every metric corrected for the judge's errors by
prediction-powered inference (``noisegauge estimate``, ``Report.estimate``); and a golden set
checked row by row on the same page (``noisegauge review GOLDEN``), then written as the person
left it (``noisegauge testset export``, :func:`export_rows`).

Light to import: numpy (the ``stats`` extra) loads when an estimate is computed; Starlette
and uvicorn (the ``review`` extra) when the review page is served.
"""

from __future__ import annotations

from .estimate import Agreement, Estimate, MetricEstimate, estimate
from .golden import export_rows, read_golden
from .labels import LabelFile, Labels, digest_of, read_labels
from .ppi import MeanEstimate, people_mean, ppi_mean

__all__ = ["Agreement", "Estimate", "MetricEstimate", "estimate", "LabelFile", "Labels",
           "digest_of", "read_labels", "MeanEstimate", "people_mean", "ppi_mean", "export_rows",
           "read_golden"]
