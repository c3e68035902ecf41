"""Converters for ``paddle.fft`` and ``paddle.signal``."""

from __future__ import annotations

from typing import Any

from opbench.mapping.converters import to_int, torch_module


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
