"""Extra providers for the accuracy checker, loaded from modules named in an environment variable.

``OPBENCH_ACCURACY_PLUGINS=tests.accuracy.plugin`` (comma-separated module names) makes
every process of a run (the main one and each worker) import those modules, which call
:func:`register` with :class:`opbench.providers.Provider` subclasses. The test suite
uses it to inject a wrong op, a crashing op and a hanging op without test code in the
production path.
"""

from __future__ import annotations

import importlib
import os

from opbench import providers as core

ENV = "OPBENCH_ACCURACY_PLUGINS"
_EXTRA: dict[str, type[core.Provider]] = {}
_INSTANCES: dict[tuple[str, str], core.Provider] = {}


def register(name: str, cls: type[core.Provider]) -> None:
    """Make provider ``name`` available to ``--subject``/``--reference``."""
    _EXTRA[name] = cls


def load() -> list[str]:
    """Import the plugin modules named in ``$OPBENCH_ACCURACY_PLUGINS``; returns their names."""
    names = [m.strip() for m in os.environ.get(ENV, "").split(",") if m.strip()]
    for module in names:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise ImportError(f"{ENV}: cannot import plugin module {module!r}: {e}") from None
    return names


def known() -> list[str]:
    """Every provider name a run may use: the core ones, then registered plugins."""
    return list(core.PROVIDERS) + sorted(_EXTRA)


def framework_of(name: str) -> str:
    """The framework provider ``name`` runs on."""
    if name in _EXTRA:
        return _EXTRA[name].framework
    return core.framework_of(name)


def get_side(name: str, device: str) -> core.Provider:
    """The provider called ``name`` on ``device`` (plugins first, then :func:`opbench.providers.get_provider`)."""
    if name in _EXTRA:
        key = (name, device)
        if key not in _INSTANCES:
            _INSTANCES[key] = _EXTRA[name](device)
        return _INSTANCES[key]
    return core.get_provider(name, device)
