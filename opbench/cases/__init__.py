"""One case grammar for the benchmark and the accuracy checker (see :mod:`opbench.cases.grammar`)."""

from opbench.cases.benchmark_json import UNKNOWN_DIM, case_from_config, load_benchmark_json
from opbench.cases.grammar import format_case, format_value, parse_line
from opbench.cases.model import (
    COMPLEX_DTYPES,
    DTYPE_SIZES,
    FLOAT_DTYPES,
    INT_DTYPES,
    Case,
    ConfigError,
    DtypeSpec,
    SliceSpec,
    TensorSpec,
    check_memory,
)
from opbench.cases.sources import CaseSet, load_case_file, parse_lines, resolve, suite_names

__all__ = [
    "COMPLEX_DTYPES",
    "DTYPE_SIZES",
    "FLOAT_DTYPES",
    "INT_DTYPES",
    "UNKNOWN_DIM",
    "Case",
    "CaseSet",
    "ConfigError",
    "DtypeSpec",
    "SliceSpec",
    "TensorSpec",
    "case_from_config",
    "check_memory",
    "format_case",
    "format_value",
    "load_benchmark_json",
    "load_case_file",
    "parse_line",
    "parse_lines",
    "resolve",
    "suite_names",
]
