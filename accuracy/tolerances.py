"""Tolerances: a default per-dtype table, per-API overrides from TOML/YAML, and a global override.

A comparison of two tensors of dtype ``d`` passes where ``|a - b| <= atol + rtol * |b|``
elementwise (NaN equal to NaN, equal infinities equal). Integers and bool are exact.
The defaults follow ``torch.testing.assert_close`` for the low precisions and are wider
than it for float32/float64, because subject and reference are different
implementations (different summation orders), not the same kernel run twice.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_OVERRIDES = Path(__file__).with_name("tolerances.toml")


@dataclass(frozen=True)
class Tolerance:
    """Absolute and relative tolerance for one dtype; ``exact`` when both are zero."""

    atol: float
    rtol: float

    @property
    def exact(self) -> bool:
        return self.atol == 0 and self.rtol == 0


EXACT = Tolerance(0.0, 0.0)

#: The default table, by case dtype name. Anything not listed (integers, bool) is exact.
DEFAULT_TABLE: Mapping[str, Tolerance] = {
    "float64": Tolerance(1e-7, 1e-7),
    "float32": Tolerance(1e-5, 1e-5),
    "float16": Tolerance(1e-3, 1e-3),
    "bfloat16": Tolerance(1e-2, 1.6e-2),
    "complex128": Tolerance(1e-7, 1e-7),
    "complex64": Tolerance(1e-5, 1e-5),
}


class ToleranceFileError(ValueError):
    """A tolerance file that cannot be read; the message names the file and the entry."""


@dataclass(frozen=True)
class Tolerances:
    """What :meth:`for_` answers: global override, then per-API override, then the dtype table.

    ``overrides[api][dtype]`` with dtype ``"*"`` meaning every floating dtype of that API.
    """

    table: Mapping[str, Tolerance]
    overrides: Mapping[str, Mapping[str, Tolerance]]
    atol: float | None = None
    rtol: float | None = None

    def explicit(self, api: str, dtype: str) -> bool:
        """True when the user or the shipped overrides set this API's tolerance (or a global one)."""
        per_api = self.overrides.get(api, {})
        return self.atol is not None or self.rtol is not None or dtype in per_api or "*" in per_api

    def for_(self, api: str, dtype: str) -> Tolerance:
        """The tolerance for an output or grad of dtype ``dtype`` of API ``api``."""
        base = self.table.get(dtype, EXACT)
        per_api = self.overrides.get(api, {})
        base = per_api.get(dtype, per_api.get("*", base) if dtype in self.table else base)
        return Tolerance(base.atol if self.atol is None else self.atol,
                         base.rtol if self.rtol is None else self.rtol)


def load_overrides(path: str | Path) -> dict[str, dict[str, Tolerance]]:
    """Per-API overrides from a ``.toml`` (or ``.yaml``/``.yml`` when PyYAML is installed) file.

    Layout (TOML)::

        ["paddle.pow"]                       # every floating dtype of paddle.pow
        atol = 1e-4
        rtol = 1e-4
        ["paddle.matmul".bfloat16]           # one dtype
        atol = 5e-2
        rtol = 2e-2
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ToleranceFileError(f"{path}: cannot read tolerance file ({e.strerror})") from None
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ToleranceFileError(f"{path}: YAML tolerance files need PyYAML (pip install pyyaml); "
                                     "or write TOML") from None
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as e:
            raise ToleranceFileError(f"{path}: not valid YAML: {str(e).splitlines()[0]}") from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ToleranceFileError(f"{path}: not valid TOML: {e}") from None
    if not isinstance(data, dict):
        raise ToleranceFileError(f"{path}: expected a table of APIs at the top level")
    return {api: _api_entry(path, api, entry) for api, entry in data.items()}


def _api_entry(path: Path, api: str, entry: Any) -> dict[str, Tolerance]:
    if not isinstance(entry, dict):
        raise ToleranceFileError(f"{path}: [{api}] must be a table")
    out: dict[str, Tolerance] = {}
    plain = {k: v for k, v in entry.items() if not isinstance(v, dict)}
    if plain:
        out["*"] = _tolerance(path, api, "*", plain)
    for dtype, sub in entry.items():
        if isinstance(sub, dict):
            if dtype not in DEFAULT_TABLE:
                raise ToleranceFileError(f"{path}: [{api}.{dtype}]: not a floating dtype "
                                         f"({', '.join(DEFAULT_TABLE)}); integers are always exact")
            out[dtype] = _tolerance(path, api, dtype, sub)
    return out


def _tolerance(path: Path, api: str, dtype: str, entry: dict[str, Any]) -> Tolerance:
    unknown = set(entry) - {"atol", "rtol"}
    if unknown:
        raise ToleranceFileError(f"{path}: [{api}] {dtype}: unknown keys {sorted(unknown)} (use atol, rtol)")
    try:
        atol, rtol = float(entry.get("atol", 0.0)), float(entry.get("rtol", 0.0))
    except (TypeError, ValueError):
        raise ToleranceFileError(f"{path}: [{api}] {dtype}: atol and rtol must be numbers") from None
    if atol < 0 or rtol < 0:
        raise ToleranceFileError(f"{path}: [{api}] {dtype}: atol and rtol must be >= 0")
    return Tolerance(atol, rtol)


def build(files: list[str | Path] | None = None, atol: float | None = None,
          rtol: float | None = None, use_defaults: bool = True) -> Tolerances:
    """The tolerances of a run: the default table, the shipped overrides, then ``files`` in order."""
    overrides: dict[str, dict[str, Tolerance]] = {}
    paths = ([DEFAULT_OVERRIDES] if use_defaults and DEFAULT_OVERRIDES.is_file() else []) + list(files or [])
    for p in paths:
        for api, entry in load_overrides(p).items():
            overrides.setdefault(api, {}).update(entry)
    return Tolerances(dict(DEFAULT_TABLE), overrides, atol, rtol)
