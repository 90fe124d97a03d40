"""Arrow interop: batches of tensors as ``fixed_shape_tensor`` columns, and tensor files.

* :func:`to_arrow` / :func:`from_arrow`: a batch of same-shape tensors <-> a
  ``pyarrow.FixedShapeTensorArray`` (the Arrow canonical extension type
  ``arrow.fixed_shape_tensor``), without copying where the layout allows.
* :func:`save` / :func:`load` (also ``tenferro.save`` / ``tenferro.load``): named
  tensors and batches in an Arrow IPC file (memory-mapped on load) or a Parquet file.
* :func:`tensor_info`: logical shape, dtype, dimension names and layout of an array.

pyarrow is optional (the ``arrow`` extra) and imported on first use; without it
these functions raise :class:`OptionalDependencyError`. See ``_convert`` for the
layout, complex and null conventions and ``_layout`` for the permutation convention.

>>> import tenferro as tf
>>> batch = tf.reshape(tf.arange(24.0), (2, 3, 4))       # four 2x3 tensors, trailing batch
>>> col = tf.arrow.to_arrow(batch, ["row", "col"], batch_axis=-1)   # shares batch's memory
>>> tuple(tf.arrow.from_arrow(col, stack=True).shape)
(2, 3, 4)
"""

from __future__ import annotations

from ._convert import COMPLEX_AXIS_NAME, ArrowTensorInfo, from_arrow, tensor_info, to_arrow
from ._deps import OptionalDependencyError, TensorFileError, TensorFileNotFoundError
from ._files import LoadedTensors, load, save
from ._paths import FORMATS

__all__ = [
    "to_arrow",
    "from_arrow",
    "tensor_info",
    "ArrowTensorInfo",
    "COMPLEX_AXIS_NAME",
    "save",
    "load",
    "LoadedTensors",
    "FORMATS",
    "OptionalDependencyError",
    "TensorFileError",
    "TensorFileNotFoundError",
]
