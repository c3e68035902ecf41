"""Converters for ``paddle.fft`` and ``paddle.signal``."""

from __future__ import annotations
