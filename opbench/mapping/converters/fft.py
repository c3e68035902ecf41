"""Converters for ``paddle.fft``, ``paddle.signal`` and ``paddle.audio``."""

from __future__ import annotations

import math
from typing import Any

from opbench.mapping.converters import dtype_or_none, to_int, torch_module
from opbench.mapping.spec import MappingUnsupported


def stft(a: dict[str, Any]) -> Any:
    """torch.stft with ``return_complex=True``; ``onesided`` None means one-sided for a real x and window."""
    torch = torch_module()
    x, window, n_fft = a["x"], a["window"], to_int(a["n_fft"])
    onesided = a["onesided"]
    if onesided is None:
        onesided = not (x.is_complex() or (window is not None and window.is_complex()))
    return torch.stft(x, n_fft, hop_length=to_int(a["hop_length"]), win_length=to_int(a["win_length"]),
                      window=window, center=a["center"], pad_mode=a["pad_mode"], normalized=a["normalized"],
                      onesided=onesided, return_complex=True)


def istft(a: dict[str, Any]) -> Any:
    """torch.istft; a two-sided x with a real result keeps only its first ``n_fft // 2 + 1`` bins, as Paddle
    does (torch would take the real part of the full inverse transform instead)."""
    torch = torch_module()
    x, n_fft, onesided = a["x"], to_int(a["n_fft"]), a["onesided"]
    if not onesided and not a["return_complex"]:
        x, onesided = x[..., : n_fft // 2 + 1, :], True
    return torch.istft(x, n_fft, hop_length=to_int(a["hop_length"]), win_length=to_int(a["win_length"]),
                       window=a["window"], center=a["center"], normalized=a["normalized"], onesided=onesided,
                       length=to_int(a["length"]), return_complex=a["return_complex"])


def _triang(torch: Any, m: int) -> Any:
    """Triangle that stays above zero at the ends (SciPy's ``triang``, which Paddle follows)."""
    n = torch.arange(1, (m + 1) // 2 + 1, dtype=torch.float64)
    half = (2 * n - 1) / m if m % 2 == 0 else 2 * n / (m + 1)
    return torch.cat([half, half.flip(0) if m % 2 == 0 else half[:-1].flip(0)])


def _bohman(torch: Any, m: int) -> Any:
    """Bohman window: the convolution of two half-cosines, zero at both ends."""
    f = torch.linspace(-1, 1, m, dtype=torch.float64)[1:-1].abs()
    inner = (1 - f) * torch.cos(math.pi * f) + torch.sin(math.pi * f) / math.pi
    return torch.cat([torch.zeros(1, dtype=torch.float64), inner, torch.zeros(1, dtype=torch.float64)])


def _general_gaussian(torch: Any, m: int, p: float, sig: float) -> Any:
    n = torch.arange(m, dtype=torch.float64) - (m - 1) / 2
    return torch.exp(-0.5 * (n / sig).abs() ** (2 * p))


def _tukey(torch: Any, m: int, alpha: float = 0.5) -> Any:
    """Tukey window: cosine tapers over ``alpha`` of the points, flat between (alpha 0: ones; 1: Hann)."""
    alpha = float(alpha)
    if alpha <= 0:
        return torch.ones(m, dtype=torch.float64)
    if alpha >= 1:
        return torch.signal.windows.hann(m, sym=True, dtype=torch.float64)
    n = torch.arange(m, dtype=torch.float64)
    width = int(math.floor(alpha * (m - 1) / 2))
    w = torch.ones(m, dtype=torch.float64)
    w[: width + 1] = 0.5 * (1 + torch.cos(math.pi * (-1 + 2 * n[: width + 1] / alpha / (m - 1))))
    tail = n[m - width - 1:]
    w[m - width - 1:] = 0.5 * (1 + torch.cos(math.pi * (-2 / alpha + 1 + 2 * tail / alpha / (m - 1))))
    return w


def _taylor(torch: Any, m: int, nbar: int = 4, sll: float = 30.0, norm: bool = True) -> Any:
    """Taylor window: ``nbar`` nearly constant side lobes ``sll`` dB below the main lobe (SciPy's form)."""
    a = math.acosh(10 ** (sll / 20)) / math.pi
    s2 = nbar**2 / (a**2 + (nbar - 0.5) ** 2)
    ma = torch.arange(1, nbar, dtype=torch.float64)
    fm = []
    for i in range(nbar - 1):
        mi2 = ma[i] ** 2
        numer = (-1) ** i * torch.prod(1 - mi2 / s2 / (a**2 + (ma - 0.5) ** 2))
        others = torch.cat([ma[:i], ma[i + 1:]]) ** 2
        fm.append(numer / (2 * torch.prod(1 - mi2 / others)))
    coef = torch.stack(fm) if fm else torch.zeros(0, dtype=torch.float64)

    def at(n: Any) -> Any:
        return 1 + 2 * (coef[:, None] * torch.cos(2 * math.pi * ma[:, None] * (n - m / 2 + 0.5) / m)).sum(0)

    w = at(torch.arange(m, dtype=torch.float64))
    return w / at(torch.tensor([(m - 1) / 2], dtype=torch.float64)) if norm else w


# Paddle's window name -> the symmetric window of m points from its parameters (Paddle's tuple after the name)
_WINDOWS: dict[str, Any] = {
    "hann": lambda t, m: t.signal.windows.hann(m, sym=True, dtype=t.float64),
    "hamming": lambda t, m: t.signal.windows.hamming(m, sym=True, dtype=t.float64),
    "blackman": lambda t, m: t.signal.windows.blackman(m, sym=True, dtype=t.float64),
    "nuttall": lambda t, m: t.signal.windows.nuttall(m, sym=True, dtype=t.float64),
    "cosine": lambda t, m: t.signal.windows.cosine(m, sym=True, dtype=t.float64),
    "bartlett": lambda t, m: t.signal.windows.bartlett(m, sym=True, dtype=t.float64),
    "gaussian": lambda t, m, std: t.signal.windows.gaussian(m, std=float(std), sym=True, dtype=t.float64),
    "exponential": lambda t, m, center=None, tau=1.0: t.signal.windows.exponential(
        m, center=None if center is None else float(center), tau=float(tau), sym=True, dtype=t.float64),
    "kaiser": lambda t, m, beta: t.signal.windows.kaiser(m, beta=float(beta), sym=True, dtype=t.float64),
    "triang": _triang,
    "bohman": _bohman,
    "general_gaussian": lambda t, m, p, sig: _general_gaussian(t, m, float(p), float(sig)),
    "taylor": _taylor,
    "tukey": _tukey,
}


def get_window(a: dict[str, Any]) -> Any:
    """A window of ``win_length`` points by name, or a (name, parameters...) tuple; ``fftbins`` makes it
    periodic (the symmetric window of one more point, its last dropped), as Paddle's and SciPy's are."""
    torch = torch_module()
    spec = a["window"] if isinstance(a["window"], (tuple, list)) else (a["window"],)
    name, params = spec[0], spec[1:]
    if name not in _WINDOWS:
        raise MappingUnsupported(f"window {name!r} (mapped: {', '.join(sorted(_WINDOWS))})")
    m, dtype = to_int(a["win_length"]), dtype_or_none(a["dtype"]) or torch.float64
    if m <= 1:  # every window of one point is [1]
        return torch.ones(max(m, 0), dtype=dtype)
    w = _WINDOWS[name](torch, m + 1 if a["fftbins"] else m, *params)
    return (w[:-1] if a["fftbins"] else w).to(dtype)
