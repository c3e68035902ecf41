"""Every mapped API verified: Paddle against its PyTorch mapping on the CPU, forward and backward.

The cases are written in PaddleAPITest's form, one file per table family under ``cases/``.
A Tensor-method or in-place variant the table derives from a function (``paddle.Tensor.abs``
from ``paddle.abs``) is checked on its function's cases with the API name swapped. Each case
must pass the accuracy checker (Paddle subject, torch reference, default tolerances), unless
the entry documents a known difference in ``known``.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import pytest

pytest.importorskip("paddle")
pytest.importorskip("torch")

from accuracy.check import Checker, Settings  # noqa: E402
from opbench.cases import Case, ConfigError, load_case_file  # noqa: E402
from opbench.mapping import is_mapped, lookup, mapped_apis  # noqa: E402
from opbench.mapping.table import TABLE, variants  # noqa: E402

CASES = Path(__file__).resolve().parent / "cases"
# Paddle CPU kernels that execute instructions the CPU may lack, killing the process (SIGILL) rather than
# raising: API -> the /proc/cpuinfo flag they need. Skipped where the flag is missing.
NEEDS_CPU_FLAG = {
    # Paddle 3.3.1's RmsNormAvxKernel uses AVX-512 without checking for it
    "paddle.incubate.nn.functional.fused_rms_norm": "avx512f",
}


@cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (empty where /proc/cpuinfo is not there)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    return frozenset(w for line in text.splitlines() if line.startswith("flags") for w in line.split(":", 1)[1].split())


# A documented known difference may still end in one of these; never in a crash or a mapping error.
KNOWN_OUTCOMES = {"pass", "accuracy_fail", "torch_error", "paddle_error", "unsupported"}


@cache
def written() -> dict[str, list[Case]]:
    """The written cases by API (a malformed line fails the collection with its FILE:LINE:COL)."""
    out: dict[str, list[Case]] = {}
    for path in sorted(CASES.glob("*.txt")):
        for item in load_case_file(path):
            if isinstance(item, ConfigError):
                raise item
            out.setdefault(item.api, []).append(item)
    return out


@cache
def bases_of() -> dict[str, list[str]]:
    """Derived variant -> the entries it can come from (a function, or a Tensor method)."""
    out: dict[str, list[str]] = {}
    for e in TABLE:
        for v in variants(e):
            out.setdefault(v.api, []).append(e.api)
    return out


def cases_for(api: str, depth: int = 0) -> list[Case]:
    """The written cases of ``api``, else the first case of the first entry it derives from that has one.

    A variant reuses its function's code path, so one case checks the binding; the function's
    own cases check the semantics.
    """
    own = written().get(api)
    if own or depth > 2:
        return own or []
    for base in bases_of().get(api, []):
        found = cases_for(base, depth + 1)
        if found:
            return [dataclasses.replace(found[0], api=api)]
    return []


def _params() -> list:
    out = []
    for api in mapped_apis():
        for i, case in enumerate(cases_for(api)):
            out.append(pytest.param(case, id=f"{api}#{i}"))
    return out


@cache
def checker() -> Checker:
    return Checker(Settings(subject="paddle", reference="torch", device="cpu"))


def test_every_mapped_api_has_a_case() -> None:
    missing = [api for api in mapped_apis() if not cases_for(api)]
    assert not missing, f"{len(missing)} mapped APIs without a case: {missing[:40]}"


def test_every_case_names_a_mapped_api() -> None:
    unmapped = sorted(api for api in written() if not is_mapped(api))
    assert not unmapped, unmapped


@pytest.mark.parametrize("case", _params())
def test_paddle_matches_torch(case: Case) -> None:
    flag = NEEDS_CPU_FLAG.get(case.api)
    if flag and cpu_flags() and flag not in cpu_flags():
        pytest.skip(f"Paddle's CPU kernel for {case.api} needs {flag}, which this CPU lacks (it would SIGILL)")
    rec = checker().check(case)
    known = lookup(case.api).known
    detail = f"{case.to_line()} ({case.where}): {rec['outcome']} {rec.get('error', '')[:400]} {rec.get('failed', '')}"
    if known:
        assert rec["outcome"] in KNOWN_OUTCOMES, detail
    else:
        assert rec["outcome"] == "pass", detail
