"""Converters for ``paddle.nn.functional`` convolution, pooling, resampling and padding."""

from __future__ import annotations
