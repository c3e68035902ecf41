"""One case grammar for the benchmark and the accuracy checker (see :mod:`opbench.cases.grammar`)."""

from opbench.cases.benchmark_json import UNKNOWN_DIM, case_from_config, load_benchmark_json
from opbench.cases.grammar import parse_line
from opbench.cases.model import (
    COMPLEX_DTYPES,
    DTYPE_SIZES,
    FLOAT8_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    TYPE_NAMES,
    Case,
    ConfigError,
    DtypeSpec,
    SizeRefused,
    SliceSpec,
    TensorSpec,
    TypeSpec,
    check_memory,
    format_case,
    format_value,
)
from opbench.cases.sources import CaseSet, load_case_file, parse_lines, resolve, suite_names

__all__ = [
    "COMPLEX_DTYPES",
    "DTYPE_SIZES",
    "FLOAT8_DTYPES",
    "FLOAT_DTYPES",
    "INT_DTYPES",
    "TYPE_NAMES",
    "UNKNOWN_DIM",
    "Case",
    "CaseSet",
    "ConfigError",
    "DtypeSpec",
    "SizeRefused",
    "SliceSpec",
    "TensorSpec",
    "TypeSpec",
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
