"""Outcomes of a case, which of them fail the gate, and how an exception becomes one.

An outcome is decided by where the error happened (subject or reference, forward or
backward) and the exception's type, never by searching its message; Paddle's error
kind (``InvalidArgument``, ``Unimplemented``, ...) is kept in the record as information.
"""

from __future__ import annotations

import re

from opbench.backends import no_kernel

PASS = "pass"
ACCURACY_FAIL = "accuracy_fail"
PADDLE_ERROR = "paddle_error"
TORCH_ERROR = "torch_error"
MAPPING_MISSING = "mapping_missing"
MAPPING_ERROR = "mapping_error"
UNSUPPORTED = "unsupported"
TOO_LARGE = "too_large"
CONFIG_ERROR = "config_error"
OOM = "oom"
TIMEOUT = "timeout"
CRASH = "crash"

OUTCOMES = (PASS, ACCURACY_FAIL, PADDLE_ERROR, TORCH_ERROR, MAPPING_ERROR, MAPPING_MISSING, UNSUPPORTED,
            TOO_LARGE, CONFIG_ERROR, OOM, TIMEOUT, CRASH)

#: Outcomes that fail the gate whichever side they came from.
FAILING = frozenset({ACCURACY_FAIL, PADDLE_ERROR, MAPPING_ERROR, OOM, TIMEOUT, CRASH})
#: Outcomes that say a case could not run here (no kernel for the op or dtype on this device; inputs
#: larger than the memory limit, refused before anything is allocated); they fail the gate only
#: under ``--strict``.
CANNOT_RUN = frozenset({UNSUPPORTED, TOO_LARGE})

# Exception classes that mean the device ran out of memory (torch.OutOfMemoryError is a
# RuntimeError subclass; Paddle raises MemoryError for ResourceExhausted).
_OOM_TYPES = frozenset({"OutOfMemoryError", "MemoryError", "ResourceExhaustedError"})
# Exception classes after which the CUDA context is unusable: the worker must be replaced.
_FATAL_TYPES = frozenset({"AcceleratorError", "CudaError"})
_PADDLE_KIND = re.compile(r"\(\s*([A-Z][A-Za-z]+)\s*\)")


def is_failing(record: dict, strict: bool = False) -> bool:
    """True when a result record fails the gate.

    An error on the subject side fails whatever its framework (``torch_error`` from a
    ``torch-ops`` subject is our op failing); an error of a torch reference alone does not.
    ``unsupported`` (no kernel for the op or dtype here) fails only when ``strict``.
    """
    outcome = record.get("outcome")
    if outcome in FAILING or (strict and outcome in CANNOT_RUN):
        return True
    return outcome in (PADDLE_ERROR, TORCH_ERROR) and record.get("error_side") == "subject"


def error_outcome(exc: BaseException, framework: str) -> str:
    """The outcome an exception from one side's framework call stands for.

    ``oom`` for out-of-memory; ``mapping_error`` when our Paddle -> PyTorch mapping (its
    binding or a converter) raised; ``mapping_missing`` when the mapping cannot express
    this call's arguments; ``unsupported`` when the framework has no kernel for the op or its dtype on
    this device; else ``<framework>_error``.
    """
    from opbench.mapping import MappingError, MappingUnsupported

    names = {t.__name__ for t in type(exc).__mro__}
    if names & _OOM_TYPES:
        return OOM
    if isinstance(exc, MappingError):
        return MAPPING_ERROR
    if isinstance(exc, MappingUnsupported):
        return MAPPING_MISSING
    if no_kernel("paddle" if framework == "paddle" else "torch", exc):
        return UNSUPPORTED
    return PADDLE_ERROR if framework == "paddle" else TORCH_ERROR


def is_fatal(exc: BaseException) -> bool:
    """True after a CUDA error or OOM: the worker records the case and is replaced."""
    return any(t.__name__ in _FATAL_TYPES | _OOM_TYPES for t in type(exc).__mro__)


def error_kind(exc: BaseException, framework: str) -> str:
    """Paddle's error kind from ``(InvalidArgument) ...`` messages, else the exception class name."""
    if framework == "paddle":
        m = _PADDLE_KIND.search(str(exc)[:200])
        if m:
            return m.group(1)
    return type(exc).__name__


def error_text(exc: BaseException, limit: int = 2000) -> str:
    """The exception as one readable block, cut to ``limit`` characters."""
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) <= limit else text[:limit] + " ..."
