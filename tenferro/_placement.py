"""Where a tensor's memory lives: :class:`Placement` and :class:`MemoryKind`.

Host tensors are NumPy arrays (``CPU``); device tensors are CuPy arrays
(``gpu(i)``). CuPy is optional and never imported here: arrays are recognised by
the module their type comes from. There is no implicit transfer between
placements; operations check their operands with :func:`check_same_placement`.
"""

from __future__ import annotations

import contextlib
import enum
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ._errors import PlacementError, TenferroValueError
from ._optional import import_optional

__all__ = [
    "MemoryKind",
    "Placement",
    "CPU",
    "gpu",
    "placement_of",
    "check_same_placement",
    "is_cupy_array",
    "default_placement",
    "get_default_placement",
    "set_default_placement",
    "resolve_placement",
    "import_cupy",
    "import_cupyx",
    "array_module_of_placement",
    "device_scope",
]


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
    raise PlacementError(
        f"placement_of: cannot tell where an object of type {type(array).__name__} lives; "
        "expected a tenferro Tensor, a numpy.ndarray or a cupy.ndarray"
    )


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
            placements = ", ".join(
                str(placement_of(x) if not hasattr(x, "placement") else x.placement) for x in tensors
            )
            raise PlacementError(
                f"{op_name}: operands must share one placement, got {placements}; "
                "move them explicitly with .to_cpu() or .to_gpu(device)"
            )
    return CPU if first is None else first


# --- the default placement of new tensors -------------------------------------------
_DEFAULT: list[Placement] = [CPU]


def get_default_placement() -> Placement:
    """Where creation functions (``asarray`` of host data, ``zeros``, ``eye``,
    ``random.normal``, ...) put a tensor when no ``placement`` is given. ``CPU``
    unless changed with :func:`set_default_placement` or :func:`default_placement`.
    Operations on existing tensors never consult it: their results live where
    their operands do."""
    return _DEFAULT[0]


def set_default_placement(placement: Placement) -> Placement:
    """Set the default placement of new tensors (process-wide); returns the previous one.

    Like ``torch.set_default_device``: ``set_default_placement(gpu(0))`` makes
    ``asarray(numpy_array)`` upload to GPU 0. Tensors that already exist stay where
    they are, and mixing placements in one operation is still a :class:`PlacementError`.
    """
    if not isinstance(placement, Placement):
        raise PlacementError(
            f"set_default_placement: expected a tenferro.Placement (tenferro.CPU or tenferro.gpu(i)), got {placement!r}"
        )
    _check_kind("set_default_placement", placement)
    if placement.is_gpu:
        import_cupy("set_default_placement")
    previous = _DEFAULT[0]
    _DEFAULT[0] = placement
    return previous


@contextlib.contextmanager
def default_placement(placement: Placement) -> Iterator[Placement]:
    """Context manager: new tensors go to ``placement`` inside the block
    (``with tf.default_placement(tf.gpu(0)): ...``)."""
    previous = set_default_placement(placement)
    try:
        yield placement
    finally:
        _DEFAULT[0] = previous


def resolve_placement(op: str, placement: Placement | None) -> Placement:
    """``placement``, or the default placement when it is ``None``; a typed error
    for anything that is not a :class:`Placement` of the CPU or a GPU."""
    if placement is None:
        return _DEFAULT[0]
    if not isinstance(placement, Placement):
        raise PlacementError(
            f"{op}: placement must be a tenferro.Placement (tenferro.CPU or tenferro.gpu(i)), got {placement!r}"
        )
    _check_kind(op, placement)
    return placement


def _check_kind(op: str, placement: Placement) -> None:
    """A typed error unless ``placement`` is ``CPU`` or ``gpu(i)``: device memory of a GPU
    numbered by a non-negative int (a ``Placement`` built by hand may name pinned or managed
    memory, or a device id such as -1, True or 1.0, that no tensor is placed in)."""
    if placement.device is None:
        if placement != CPU:
            raise PlacementError(f"{op}: cannot place a tensor in {placement}; expected CPU or gpu(device)")
        return
    device = placement.device
    if not isinstance(device, int) or isinstance(device, bool) or device < 0:
        raise PlacementError(f"{op}: a GPU's device id must be a non-negative int, got {device!r} in {placement!r}")
    if placement.memory_kind is not MemoryKind.DEVICE:
        raise PlacementError(
            f"{op}: cannot place a tensor in {placement.memory_kind.value} memory of GPU {device}; "
            f"expected gpu({device}) (device memory) or CPU"
        )


def import_cupy(op: str) -> Any:
    """Import CuPy on demand (an optional dependency), raising
    :class:`PlacementError` naming ``op`` when it is missing."""
    return import_optional(
        "cupy",
        PlacementError,
        f"{op}: CuPy is not installed, so GPU placement is unavailable; "
        "install the 'gpu' extra (cupy>=13) or keep tensors on the CPU",
    )


def import_cupyx(op: str) -> Any:
    """``cupyx`` (CuPy's extras: scatter kernels, ``cupyx.scipy``), on demand."""
    import_cupy(op)
    return import_optional(
        ("cupyx", "cupyx.scipy.linalg"),
        PlacementError,
        f"{op}: CuPy's cupyx is missing; reinstall the 'gpu' extra (cupy>=13)",
    )


def array_module_of_placement(op: str, placement: Placement) -> Any:
    """``numpy`` for the CPU, ``cupy`` for a GPU."""
    return np if placement.device is None else import_cupy(op)


def device_scope(op: str, placement: Placement) -> Any:
    """A context manager that makes ``placement``'s GPU current (CuPy allocates on
    the current device); a no-op for the CPU."""
    if placement.device is None:
        return contextlib.nullcontext()
    return import_cupy(op).cuda.Device(placement.device)
