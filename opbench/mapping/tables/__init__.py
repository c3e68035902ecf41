"""The mapping table's entries, one module per family of Paddle APIs (each exports ``ENTRIES``).

:mod:`opbench.mapping.table` gathers them and derives the Tensor-method and in-place
variants Paddle also exposes. Converters for a family live in the module of the same name
under :mod:`opbench.mapping.converters`; the cases that verify it in ``tests/mapping/cases/``.
"""

from opbench.mapping.tables import (
    creation,
    elementwise,
    fft,
    linalg,
    manipulation,
    nn_conv_pool,
    nn_functional,
    reduction,
    tensor_methods,
    vision_incubate,
)

FAMILIES = (
    elementwise, tensor_methods, reduction, manipulation, creation, linalg, fft, nn_functional, nn_conv_pool,
    vision_incubate,
)

__all__ = ["FAMILIES"]
