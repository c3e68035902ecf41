"""Providers: the implementations a case can run on, shared by the benchmark and the accuracy checker.

``paddle`` (the Paddle API), ``torch`` (its mapped PyTorch call), ``paddle-ops``
and ``torch-ops`` (this repo's custom op through each binding), ``torch-compile``
(the mapped call under ``torch.compile``), ``liger`` (Liger-Kernel's Triton RMSNorm/LayerNorm for the
two norm APIs, on a GPU with ``liger_kernel`` installed). :meth:`Provider.prepare` turns a case
and its inputs into a :class:`PreparedCall` that runs forward and backward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from opbench import inputs as inputs_mod
from opbench.backends import Backend, get_backend, installed
from opbench.cases import FLOAT_DTYPES, Case, DtypeSpec, SliceSpec, TensorSpec, TypeSpec

PROVIDERS = ("paddle", "torch", "paddle-ops", "torch-ops", "torch-compile", "liger")
# Python packages a provider needs besides its framework (it is not installed without them).
_NEEDS = {"liger": "liger_kernel"}


class NotApplicable(LookupError):
    """The provider cannot run this case (no mapping, no custom op, framework missing)."""


def flatten(value: Any) -> list[Any]:
    """Tensors and other leaves of a (possibly nested) output, in order."""
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in flatten(v)]
    return [value]


@dataclass
class PreparedCall:
    """A case bound to one provider's tensors: call :meth:`forward`, then :meth:`backward`."""

    provider: Provider
    case: Case
    call: Callable[[], Any]  # the API call with its arguments bound (nothing left to do but call)
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    tensors: list[Any]  # every input tensor, in Case.tensors() order
    grad_inputs: list[Any]  # the ones autograd differentiates

    @property
    def backend(self) -> Backend:
        return self.provider.backend

    def forward(self) -> Any:
        return self.call()

    def differentiable_outputs(self, out: Any) -> list[Any]:
        """The outputs backward starts from: floating tensors autograd tracks."""
        b = self.backend
        return [t for t in flatten(out) if b.is_tensor(t) and b.is_floating(t) and b.requires_grad(t)]

    def backward(self, outputs: Sequence[Any], grads: Sequence[Any], retain_graph: bool = False) -> list[Any]:
        """Input grads (``None`` where an input does not affect the outputs)."""
        if not self.grad_inputs or not outputs:
            return [None] * len(self.grad_inputs)
        return self.backend.grad(outputs, self.grad_inputs, grads, retain_graph=retain_graph)


class Provider:
    """One way to run a case: a framework backend plus the callable for the case's API."""

    name = ""
    framework = ""

    def __init__(self, device: str = "cpu") -> None:
        self.backend = get_backend(self.framework, device)
        self.device = device

    def why_not(self, case: Case) -> str | None:
        """``None`` when the provider can run the case, else the reason it cannot."""
        return None

    def function(self, case: Case) -> Callable[..., Any]:
        raise NotImplementedError

    def bind_call(self, case: Case, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
        """The case's call with its arguments bound; work done here stays out of timed regions."""
        fn = self.function(case)
        return lambda: fn(*args, **kwargs)

    def prepare(self, case: Case, seed: int = 0, values: Sequence[Any] | None = None,
                requires_grad: bool = True) -> PreparedCall:
        """Bind the case to this provider's tensors.

        ``values``: one per tensor of the case, host arrays (from :func:`opbench.inputs.generate`)
        or tensors already of this framework on the device (used as they are, detached);
        by default they are generated from ``seed``.
        """
        reason = self.why_not(case)
        if reason:
            raise NotApplicable(reason)
        if values is None:
            values = inputs_mod.generate(case, seed)
        nondiff = _nondiff_params(case)
        params = [t.param for t in inputs_mod.tensor_inputs(case)]
        b = self.backend
        tensors: list[Any] = []
        grad_inputs: list[Any] = []

        def make(spec: TensorSpec) -> Any:
            i = len(tensors)
            wants_grad = requires_grad and spec.dtype in FLOAT_DTYPES and params[i] not in nondiff
            v = values[i]
            t = b.from_numpy(v, spec.dtype, wants_grad) if isinstance(v, np.ndarray) else b.detach(v, wants_grad)
            tensors.append(t)
            if wants_grad:
                grad_inputs.append(t)
            return t

        def build(v: Any) -> Any:
            if isinstance(v, TensorSpec):
                return make(v)
            if isinstance(v, DtypeSpec):
                return b.framework_dtype(v.name)
            if isinstance(v, SliceSpec):
                return slice(v.start, v.stop, v.step)
            if isinstance(v, TypeSpec):
                return python_type(v)
            if isinstance(v, list):
                return [build(e) for e in v]
            if isinstance(v, tuple):
                return tuple(build(e) for e in v)
            return v

        args = tuple(build(a) for a in case.args)
        kwargs = {k: build(v) for k, v in case.kwargs}
        return PreparedCall(self, case, self.bind_call(case, args, kwargs), args, kwargs, tensors, grad_inputs)


def python_type(spec: TypeSpec) -> type:
    """The type object a ``type(...)`` argument names: a builtin, or a NumPy scalar type."""
    import builtins

    module, _, name = spec.name.rpartition(".")
    return getattr(np if module == "numpy" else builtins, name)


def _nondiff_params(case: Case) -> frozenset[str]:
    from opbench.mapping import MappingMissing, lookup

    try:
        return frozenset(lookup(case.api).nondiff) | {"out"}  # an output buffer takes no gradient
    except MappingMissing:
        return frozenset({"out"})


def _mapping_reason(case: Case) -> str | None:
    from opbench.mapping import is_mapped

    return None if is_mapped(case.api) else f"no PyTorch mapping for {case.api}"


# Operators that write into their first operand (besides the ``name_`` methods).
_INPLACE_DUNDERS = frozenset({
    "__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
    "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__", "__imatmul__",
})


def is_inplace(api: str) -> bool:
    """True for an API that writes into its first argument (``paddle.Tensor.exp_``, ``__setitem__``)."""
    base = api.rpartition(".")[2]
    return (base.endswith("_") and not base.endswith("__")) or base in _INPLACE_DUNDERS


class PaddleProvider(Provider):
    """The Paddle API itself.

    An in-place API runs on a copy of its first argument and returns that copy: the case's
    inputs are leaves that take gradients, which no framework lets an in-place op write into,
    and a benchmark repeats the call on the same inputs.
    """

    name = framework = "paddle"

    def bind_call(self, case: Case, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
        if not (is_inplace(case.api) and args and self.backend.is_tensor(args[0])):
            return super().bind_call(case, args, kwargs)
        fn, clone, first, rest = self.function(case), self.backend.clone, args[0], args[1:]

        def call() -> Any:
            target = clone(first)
            fn(target, *rest, **kwargs)
            return target

        return call

    def why_not(self, case: Case) -> str | None:
        try:
            self.backend.resolve(case.api)
        except AttributeError as e:
            return str(e) if "paddle" in str(e) else f"{case.api} is not a Paddle API"
        return None

    def function(self, case: Case) -> Callable[..., Any]:
        return self.backend.resolve(case.api)


class TorchProvider(Provider):
    """The PyTorch counterpart from :mod:`opbench.mapping`."""

    name = framework = "torch"

    def why_not(self, case: Case) -> str | None:
        return _mapping_reason(case)

    def function(self, case: Case) -> Callable[..., Any]:
        from opbench.mapping import torch_call

        api = case.api
        return lambda *args, **kwargs: torch_call(api, args, kwargs)

    def bind_call(self, case: Case, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
        """Bind and translate the arguments once (the eager call then does no mapping work per call).

        A subclass that supplies its own :meth:`function` (``torch-compile``, test providers) is called
        through it.
        """
        if type(self).function is not TorchProvider.function:
            return super().bind_call(case, args, kwargs)
        from opbench.mapping import prepare_torch_call

        return prepare_torch_call(case.api, args, kwargs)


class TorchCompileProvider(TorchProvider):
    """The mapped PyTorch call under ``torch.compile`` (static shapes), compiled once per case.

    The compiled function takes the tensors as arguments (dynamo traces the mapping once).
    """

    name = "torch-compile"

    def __init__(self, device: str = "cpu") -> None:
        super().__init__(device)
        self._compiled: dict[str, Callable[..., Any]] = {}

    def function(self, case: Case) -> Callable[..., Any]:
        key = case.to_line()
        if key not in self._compiled:
            self._compiled[key] = self.backend.compile(super().function(case))
        return self._compiled[key]


class OpsProvider(Provider):
    """This repository's custom op for the API, through one framework's binding."""

    def why_not(self, case: Case) -> str | None:
        import ops

        if case.api not in ops.OPS:
            return f"ops/ has no custom op for {case.api}"
        refuses = getattr(ops.OPS[case.api], "why_not", None)  # the op's own rule on the case's shapes/dtypes
        return (refuses and refuses(*case.args, **dict(case.kwargs))) or ops.available(self.framework)

    def function(self, case: Case) -> Callable[..., Any]:
        import ops

        return ops.OPS[case.api]


class PaddleOpsProvider(OpsProvider):
    name, framework = "paddle-ops", "paddle"


class TorchOpsProvider(OpsProvider):
    name, framework = "torch-ops", "torch"


def _liger_rms_norm(x: Any, normalized_shape: Any, weight: Any = None, eps: float = 1e-5, name: Any = None) -> Any:
    from liger_kernel.transformers.functional import liger_rms_norm

    w = weight if weight is not None else x.new_ones(x.shape[-1:])
    return liger_rms_norm(x, w, eps, in_place=False)  # in place would overwrite the reused output grad


def _liger_layer_norm(x: Any, normalized_shape: Any, weight: Any = None, bias: Any = None, epsilon: float = 1e-5,
                      name: Any = None) -> Any:
    from liger_kernel.transformers.functional import liger_layer_norm

    w = weight if weight is not None else x.new_ones(x.shape[-1:])
    b = bias if bias is not None else x.new_zeros(x.shape[-1:])
    return liger_layer_norm(x, w, b, epsilon)


# Liger-Kernel's function for each Paddle API it stands in for; cases are refused by ops/'s rule for the
# same API (Liger normalizes the last dim too).
_LIGER = {"paddle.nn.functional.rms_norm": _liger_rms_norm, "paddle.nn.functional.layer_norm": _liger_layer_norm}


class LigerProvider(Provider):
    """Liger-Kernel's Triton norm kernels, an industry anchor for ``ops/``'s rms_norm and layer_norm."""

    name, framework = "liger", "torch"

    def why_not(self, case: Case) -> str | None:
        import importlib.util

        if case.api not in _LIGER:
            return f"liger has no kernel for {case.api}"
        if importlib.util.find_spec("liger_kernel") is None:
            return "liger_kernel is not installed"
        if self.device != "gpu":
            return "liger's kernels are Triton (GPU only)"
        import ops

        refuses = getattr(ops.OPS.get(case.api), "why_not", None)
        return refuses(*case.args, **dict(case.kwargs)) if refuses else None

    def function(self, case: Case) -> Callable[..., Any]:
        return _LIGER[case.api]


_CLASSES: dict[str, type[Provider]] = {
    "paddle": PaddleProvider,
    "torch": TorchProvider,
    "torch-compile": TorchCompileProvider,
    "paddle-ops": PaddleOpsProvider,
    "torch-ops": TorchOpsProvider,
    "liger": LigerProvider,
}
_INSTANCES: dict[tuple[str, str], Provider] = {}


def get_provider(name: str, device: str = "cpu") -> Provider:
    """The provider called ``name`` on ``device`` (one instance per pair, so compiled code is reused)."""
    if name not in _CLASSES:
        raise ValueError(f"unknown provider {name!r} (known: {', '.join(PROVIDERS)})")
    key = (name, device)
    if key not in _INSTANCES:
        _INSTANCES[key] = _CLASSES[name](device)
    return _INSTANCES[key]


def framework_of(name: str) -> str:
    """The framework a provider runs on (``torch-compile`` -> ``torch``)."""
    if name not in _CLASSES:
        raise ValueError(f"unknown provider {name!r} (known: {', '.join(PROVIDERS)})")
    return _CLASSES[name].framework


def installed_providers() -> list[str]:
    """Providers whose framework is installed (whether each applies is decided per case)."""
    import importlib.util

    return [p for p in PROVIDERS if installed(framework_of(p))
            and (p not in _NEEDS or importlib.util.find_spec(_NEEDS[p]) is not None)]


# Left out of the default set on a device, with why: compiling each case takes seconds on a CPU,
# more than timing the whole suite there. Naming them in --providers still runs them.
NOT_BY_DEFAULT = {"cpu": ("torch-compile",)}


def default_providers(device: str) -> list[str]:
    """The providers ``opbench bench`` runs without ``--providers``: the installed ones, less
    :data:`NOT_BY_DEFAULT` on ``device``."""
    return [p for p in installed_providers() if p not in NOT_BY_DEFAULT.get(device, ())]
