"""Reading datasets and writing results. Heavy libraries (pandas, pyarrow, datasets) load lazily."""

from .ragchecker import RAGCHECKER_GROUPS, RAGCHECKER_NAMES, RagcheckerWriter, to_ragchecker_record
from .readers import FORMATS, Source, detect_format, open_source
from .rows import RawRow
from .writers import OUTPUT_FORMATS, RowWriter, flat_row, open_writer, output_format

__all__ = [
    "FORMATS",
    "OUTPUT_FORMATS",
    "RAGCHECKER_GROUPS",
    "RAGCHECKER_NAMES",
    "RagcheckerWriter",
    "RawRow",
    "RowWriter",
    "Source",
    "detect_format",
    "flat_row",
    "open_source",
    "open_writer",
    "output_format",
    "to_ragchecker_record",
]
