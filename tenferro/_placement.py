"""Where a tensor's memory lives: :class:`Placement` and :class:`MemoryKind`.

Host tensors are NumPy arrays (``CPU``); device tensors are CuPy arrays
(``gpu(i)``). CuPy is optional and never imported here: arrays are recognised by
the module their type comes from. There is no implicit transfer between
placements; operations check their operands with :func:`check_same_placement`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._errors import PlacementError, TenferroValueError

__all__ = ["MemoryKind", "Placement", "CPU", "gpu", "placement_of", "check_same_placement", "is_cupy_array"]


class MemoryKind(enum.Enum):
    """The kind of memory a buffer lives in."""

    DEVICE = "device"
    PINNED_HOST = "pinned_host"
    UNPINNED_HOST = "unpinned_host"
    MANAGED = "managed"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Placement:
    """A memory kind plus a device id (``None`` for the host, an int for a GPU)."""

    memory_kind: MemoryKind
    device: int | None = None

    @property
    def is_cpu(self) -> bool:
        """True for host memory (pinned or not) with no device id."""
        return self.device is None

    @property
    def is_gpu(self) -> bool:
        """True for memory owned by a GPU device."""
        return self.device is not None

    def __str__(self) -> str:
        if self.device is None:
            return "cpu" if self.memory_kind is MemoryKind.UNPINNED_HOST else f"cpu({self.memory_kind.value})"
        if self.memory_kind is MemoryKind.DEVICE:
            return f"gpu:{self.device}"
        return f"gpu:{self.device}({self.memory_kind.value})"


CPU = Placement(MemoryKind.UNPINNED_HOST, None)


def gpu(device: int = 0) -> Placement:
    """The placement of device memory on GPU ``device``."""
    if not isinstance(device, int) or isinstance(device, bool) or device < 0:
        raise TenferroValueError(f"gpu: device must be a non-negative int, got {device!r}")
    return Placement(MemoryKind.DEVICE, device)


def is_cupy_array(array: object) -> bool:
    """True when ``array`` is a CuPy ndarray (checked without importing CuPy)."""
    return type(array).__module__.startswith("cupy")


def placement_of(array: Any) -> Placement:
    """The placement of a NumPy array (``CPU``) or a CuPy array (``gpu(id)``)."""
    if isinstance(array, np.ndarray):
        return CPU
    if is_cupy_array(array):
        return Placement(MemoryKind.DEVICE, int(array.device.id))
    p = getattr(array, "placement", None)
    if isinstance(p, Placement):
        return p
    raise PlacementError(f"placement_of: cannot tell where an object of type {type(array).__name__} lives; "
                         "expected a tenferro Tensor, a numpy.ndarray or a cupy.ndarray")


def check_same_placement(op_name: str, *tensors: Any) -> Placement:
    """Return the common placement of ``tensors``; raise PlacementError if they differ.

    ``tensors`` may be Tensors or arrays. With no operand, returns ``CPU``.
    """
    first: Placement | None = None
    for t in tensors:
        p = t.placement if isinstance(getattr(t, "placement", None), Placement) else placement_of(t)
        if first is None:
            first = p
        elif p != first:
            placements = ", ".join(str(placement_of(x) if not hasattr(x, "placement") else x.placement)
                                   for x in tensors)
            raise PlacementError(f"{op_name}: operands must share one placement, got {placements}; "
                                 "move them explicitly with .to_cpu() or .to_gpu(device)")
    return CPU if first is None else first
