"""``paddle.fft``, ``paddle.signal`` and ``paddle.audio``."""

from __future__ import annotations

from opbench.mapping.converters import fft as cv
from opbench.mapping.spec import ApiMapping as M

# Paddle's fft functions are torch.fft's, with ``axis``/``axes`` for ``dim`` and the same ``norm`` names.
_ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_N_D = ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")

ENTRIES: list[M] = [
    *(M(f"paddle.fft.{f}", f"torch.fft.{f}(x, n=int(n), dim=int(axis), norm=norm)") for f in _ONE_D),
    *(M(f"paddle.fft.{f}", f"torch.fft.{f}(x, s=ints(s), dim=ints(axes), norm=norm)") for f in _N_D),
    M("paddle.fft.fftshift", "torch.fft.fftshift(x, dim=axes(axes))"),
    M("paddle.fft.ifftshift", "torch.fft.ifftshift(x, dim=axes(axes))"),
    M("paddle.fft.fftfreq", "torch.fft.fftfreq(int(n), d=float(d), dtype=dtype(dtype))",
      ignore=("requires_grad", "device")),
    M("paddle.fft.rfftfreq", "torch.fft.rfftfreq(int(n), d=float(d), dtype=dtype(dtype))",
      ignore=("requires_grad", "device")),
    M("paddle.signal.stft", convert=cv.stft),
    M("paddle.signal.istft", convert=cv.istft),
    M("paddle.audio.functional.get_window", convert=cv.get_window),
]
