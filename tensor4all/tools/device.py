"""Where the dense sweeps keep their arrays: NumPy on the CPU, CuPy on a GPU.

The dense DMRG/TDVP kernels (:mod:`._environments`, :mod:`._effective`, :mod:`._eigensolver`,
:mod:`._krylov`, :mod:`._truncation`, :mod:`._dense_backend`) are written once over an array
module ``xp``: NumPy functions applied to CuPy arrays dispatch to CuPy (NEP 18), and the few
places that make a new array (``zeros``, ``empty``, an upload of host numbers) ask
:func:`array_module` of an operand which module to use. Small host data (Krylov
tridiagonal matrices, singular values for the truncation decision) is read back explicitly
with :func:`to_host`, and scalars by ``float()``; no array moves between host and device
implicitly.

CuPy is an optional dependency, imported on first use of a GPU placement.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

import tenferro as tf
from tenferro.checks import import_optional, install_hint

from .errors import InvalidOptionError, OptionalDependencyError

__all__ = [
    "array_module",
    "is_device_array",
    "to_host",
    "host_tensor",
    "stored_array",
    "to_device",
    "check_placement",
    "cupy_module",
    "synchronize",
    "contiguous",
    "device_scope",
]


def cupy_module(what: str) -> Any:
    """CuPy, imported on demand; :class:`OptionalDependencyError` naming ``what`` without it."""
    return import_optional(
        "cupy",
        OptionalDependencyError,
        f"{what} on a GPU needs CuPy and a GPU: {install_hint('gpu')} or run on the CPU",
    )


def is_device_array(a: Any) -> bool:
    """True for a CuPy array (told by its type's module, without importing CuPy)."""
    return type(a).__module__.startswith("cupy")


def array_module(a: Any) -> Any:
    """``numpy`` for host arrays, ``cupy`` for device arrays."""
    return cupy_module("a device array") if is_device_array(a) else np


def contiguous(a: Any) -> Any:
    """``a`` C-contiguous, where it lives (``np.ascontiguousarray`` would pull a device array to the host)."""
    return array_module(a).ascontiguousarray(a)


def to_host(a: Any) -> np.ndarray:
    """A NumPy array of ``a`` (one device-to-host copy for a device array, ``a`` itself on the host)."""
    return a.get() if is_device_array(a) else np.asarray(a)


def host_tensor(a: Any) -> tf.Tensor:
    """A column-major tenferro tensor of ``a`` on the host, whatever tenferro's default placement
    (results handed back to the user live on the host)."""
    return tf.asarray(np.asfortranarray(to_host(a)), placement=tf.CPU)


def stored_array(t: tf.Tensor) -> Any:
    """The array tensor ``t`` stores, where it lives, without a copy: ``t.numpy()`` on the CPU,
    ``cupy.from_dlpack(t)`` on a GPU (tenferro's documented zero-copy exports)."""
    if t.placement.device is None:
        return t.numpy()
    return cupy_module("a device tensor").from_dlpack(t)


def check_placement(placement: Any, what: str) -> tf.Placement:
    """``placement`` as a :class:`tenferro.Placement` (``None``: tenferro's default placement); a
    GPU placement needs CuPy and a device."""
    if placement is None:
        placement = tf.get_default_placement()
    if not isinstance(placement, tf.Placement) or (placement.device is None and placement != tf.CPU):
        raise InvalidOptionError(f"{what}: placement must be tenferro.CPU or tenferro.gpu(i), got {placement!r}")
    if placement.is_gpu:
        cp = cupy_module(what)
        try:
            count = cp.cuda.runtime.getDeviceCount()
        except Exception as exc:  # noqa: BLE001  (CUDA driver errors have many types)
            raise OptionalDependencyError(f"{what}: CuPy cannot reach a GPU ({type(exc).__name__}: {exc})") from None
        if placement.device >= count:
            raise InvalidOptionError(
                f"{what}: placement {placement} names a GPU that does not exist ({count} device(s) visible)"
            )
    return placement


def to_device(arrays: list[np.ndarray], placement: tf.Placement) -> list[Any]:
    """C-contiguous copies of host ``arrays`` on ``placement`` (the arrays themselves for the CPU)."""
    if placement.device is None:
        return [np.ascontiguousarray(a) for a in arrays]
    cp = cupy_module("to_device")
    with cp.cuda.Device(placement.device):
        return [cp.ascontiguousarray(cp.asarray(np.ascontiguousarray(a))) for a in arrays]


def device_scope(placement: tf.Placement) -> Any:
    """A context in which new device arrays go to ``placement``'s GPU (a no-op on the CPU)."""
    if placement.device is None:
        return contextlib.nullcontext()
    return cupy_module("device_scope").cuda.Device(placement.device)


def synchronize(a: Any) -> None:
    """Wait for the device work that produces ``a`` (nothing on the host): for timings."""
    if is_device_array(a):
        cupy_module("synchronize").cuda.Device().synchronize()
