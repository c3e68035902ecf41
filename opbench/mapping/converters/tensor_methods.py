"""Converters for ``paddle.Tensor`` methods and operators."""

from __future__ import annotations
