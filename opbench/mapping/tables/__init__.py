"""The mapping table's entries, one module per family of Paddle APIs (each exports ``ENTRIES``).

:mod:`opbench.mapping.table` gathers them and derives the Tensor-method and in-place
variants Paddle also exposes.
"""

from opbench.mapping.tables import elementwise, linalg, manipulation, nn_functional, reduction, tensor_methods

FAMILIES = (elementwise, reduction, manipulation, linalg, nn_functional, tensor_methods)

__all__ = ["FAMILIES"]
