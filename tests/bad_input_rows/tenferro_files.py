"""Bad-input rows of tenferro's files and Arrow: DLPack producers, save, load, to_arrow, from_arrow."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile

import numpy as np

import tenferro as tf

from .common import B, new_table

ROWS, row = new_table()


# ---- issue 21: arrow and files -------
# (file rows use a directory made at import; the Arrow rows need pyarrow, the optional 'arrow' extra)


class _BadDLPackProducer:
    def __init__(self, device=(1, 0), error=None):
        self.device, self.error = device, error

    def __dlpack__(self, **kwargs):
        if self.error is not None:
            raise self.error
        return np.ones(2).__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


row(
    "from_dlpack-device-None",
    tf.from_dlpack,
    (_BadDLPackProducer(device=None),),
    tf.PlacementError,
    "expected a pair of integers",
)
row(
    "from_dlpack-device-str",
    tf.from_dlpack,
    (_BadDLPackProducer(device=("cpu", 0)),),
    tf.PlacementError,
    "returned ('cpu', 0)",
)
row(
    "from_dlpack-producer-KeyError",
    tf.from_dlpack,
    (_BadDLPackProducer(error=KeyError("x")),),
    tf.PlacementError,
    "cannot import _BadDLPackProducer",
)
row(
    "from_dlpack-copy-int",
    tf.from_dlpack,
    (np.ones(2),),
    tf.TenferroValueError,
    "copy must be None, True or False",
    copy=1,
)
if importlib.util.find_spec("pyarrow") is not None:
    import pyarrow as _pa

    AF_DIR = tempfile.mkdtemp(prefix="tenferro-bad-inputs-")
    atexit.register(shutil.rmtree, AF_DIR, True)
    AF_T = tf.ones((2, 3))
    AF_GOOD = os.path.join(AF_DIR, "good.arrow")
    tf.save(AF_GOOD, {"a": AF_T, "n": [AF_T, None]})
    AF_COL = tf.arrow.to_arrow([AF_T, None])

    def _af_file(name, data):
        path = os.path.join(AF_DIR, name)
        with open(path, "wb") as fh:
            fh.write(data)
        return path

    AF_EMPTY = _af_file("empty.arrow", b"")
    AF_JUNK = _af_file("junk.arrow", b"hello, not a tensor file")
    with open(AF_GOOD, "rb") as _fh:
        AF_TRUNCATED = _af_file("truncated.arrow", _fh.read()[:100])
    AF_NPZ = os.path.join(AF_DIR, "a.npz")
    np.savez(AF_NPZ, x=np.ones(2))
    AF_FILE = _af_file("plainfile", b"x")
    AF_ENTRY = {"a": AF_T}

    def af(name):
        return os.path.join(AF_DIR, name)

    # paths: wrong type, empty, NUL, missing or unusable directories, names too long
    for label, bad in (("int", 123), ("None", None), ("float", 1.5), ("list", ["x.arrow"])):
        row(f"save-path-{label}", tf.save, (bad, AF_ENTRY), tf.TenferroTypeError, "path must be a str or os.PathLike")
        row(f"load-path-{label}", tf.load, (bad,), tf.TenferroTypeError, "path must be a str or os.PathLike")
    row("save-path-empty", tf.save, ("", AF_ENTRY), tf.TenferroValueError, "the path is empty")
    row("load-path-empty", tf.load, ("",), tf.TenferroValueError, "the path is empty")
    row("save-path-nul", tf.save, (af("a\0b.arrow"), AF_ENTRY), tf.TenferroValueError, "NUL character")
    row("load-path-nul", tf.load, (af("a\0b.arrow"),), tf.TenferroValueError, "NUL character")
    row(
        "save-missing-directory",
        tf.save,
        (af("missing/x.arrow"), AF_ENTRY),
        tf.arrow.TensorFileNotFoundError,
        "missing' does not exist",
    )
    row(
        "save-directory-is-a-file",
        tf.save,
        (os.path.join(AF_FILE, "x.arrow"), AF_ENTRY),
        tf.arrow.TensorFileError,
        "plainfile' is not a directory",
    )
    row("save-path-is-a-directory", tf.save, (AF_DIR, AF_ENTRY), tf.arrow.TensorFileError, "is a directory")
    row(
        "save-name-too-long",
        tf.save,
        (af("a" * 300 + ".arrow"), AF_ENTRY),
        tf.arrow.TensorFileError,
        "is too long (306 bytes",
    )
    if os.path.isdir("/proc/self"):  # a directory where nobody, root included, can create files
        row(
            "save-unwritable-directory",
            tf.save,
            ("/proc/self/x.arrow", AF_ENTRY),
            tf.arrow.TensorFileError,
            "no file can be created in directory '/proc/self'",
        )
    # formats, extensions, compression
    row("save-npz-extension", tf.save, (af("x.npz"), AF_ENTRY), tf.TenferroValueError, "the extension of NumPy .npz")
    row("save-pt-extension", tf.save, (af("x.pt"), AF_ENTRY), tf.TenferroValueError, "the extension of PyTorch")
    row(
        "save-format-contradicts-extension",
        tf.save,
        (af("x.parquet"), AF_ENTRY),
        tf.TenferroValueError,
        "format='arrow' contradicts the extension",
        format="arrow",
    )
    row(
        "save-format-unknown",
        tf.save,
        (af("x.arrow"), AF_ENTRY),
        tf.TenferroValueError,
        "unknown format 'hdf5'",
        format="hdf5",
    )
    row(
        "save-compression-unknown",
        tf.save,
        (af("x.arrow"), AF_ENTRY),
        tf.TenferroValueError,
        "expected None or one of lz4, zstd",
        compression="snappy",
    )
    row(
        "save-compression-int",
        tf.save,
        (af("x.arrow"), AF_ENTRY),
        tf.TenferroTypeError,
        "codec name or None",
        compression=3,
    )
    # entries and dim_names
    for label, entries, exc, fragment in (
        ("not-a-mapping", [AF_T], tf.TenferroTypeError, "non-empty dict"),
        ("empty", {}, tf.TenferroTypeError, "non-empty dict"),
        ("key-int", {1: AF_T}, tf.TenferroTypeError, "got 1 of type int"),
        ("key-empty", {"": AF_T}, tf.TenferroValueError, "non-empty strings, got ''"),
        ("value-str", {"a": "x"}, tf.TenferroTypeError, "entry 'a' is a str"),
        ("value-ndarray", {"a": np.ones(2)}, tf.TenferroTypeError, "entry 'a' is a ndarray"),
        ("value-list-of-ndarray", {"a": [np.ones(2)]}, tf.TenferroTypeError, "entry 'a': entry 0 is a ndarray"),
        ("value-list-all-None", {"a": [None]}, tf.TenferroValueError, "entry 'a': cannot infer"),
        ("value-0d", {"a": tf.asarray(1.0)}, tf.ShapeError, "entry 'a': 0-d tensors"),
        ("value-bool", {"a": B}, tf.DTypeError, "entry 'a': bool tensors"),
        ("value-plain-arrow", {"a": AF_COL.storage}, tf.TenferroTypeError, "entry 'a': expected an Arrow"),
    ):
        row(f"save-entries-{label}", tf.save, (af("e.arrow"), entries), exc, fragment)
    row(
        "save-dim_names-list",
        tf.save,
        (af("e.arrow"), AF_ENTRY),
        tf.TenferroTypeError,
        "dim_names must be a dict",
        dim_names=["i", "j"],
    )
    row(
        "save-dim_names-unknown",
        tf.save,
        (af("e.arrow"), AF_ENTRY),
        tf.TenferroValueError,
        "not entries",
        dim_names={"b": ["i", "j"]},
    )
    row(
        "save-dim_names-reserved",
        tf.save,
        (af("e.arrow"), AF_ENTRY),
        tf.TenferroValueError,
        "'re_im' is reserved",
        dim_names={"a": ["i", "re_im"]},
    )
    # load: flags, missing, empty, truncated, foreign files
    for arg in ("mmap", "stack"):
        for bad in ("no", 1, None):
            row(
                f"load-{arg}-{bad!r}",
                tf.load,
                (AF_GOOD,),
                tf.TenferroValueError,
                f"{arg} must be True or False",
                **{arg: bad},
            )
    row("load-missing", tf.load, (af("nope.arrow"),), tf.arrow.TensorFileNotFoundError, "nope.arrow' (No such file")
    row("load-directory", tf.load, (AF_DIR,), tf.arrow.TensorFileError, "cannot open")
    row("load-empty-file", tf.load, (AF_EMPTY,), tf.arrow.TensorFileError, "empty.arrow' is empty (0 bytes)")
    row("load-junk", tf.load, (AF_JUNK,), tf.arrow.TensorFileError, "junk.arrow' is neither an Arrow IPC file")
    row("load-truncated", tf.load, (AF_TRUNCATED,), tf.arrow.TensorFileError, "truncated.arrow' could not be read")
    row("load-npz", tf.load, (AF_NPZ,), tf.arrow.TensorFileError, "looks like a zip archive")
    row("load-stack-with-nulls", tf.load, (AF_GOOD,), tf.TenferroValueError, "column 'n' of", stack=True)
    # to_arrow / from_arrow / tensor_info
    row("to_arrow-batch_axis-bool", tf.arrow.to_arrow, (AF_T,), tf.AxisError, "got the boolean True", batch_axis=True)
    row(
        "to_arrow-dim_names-reserved",
        tf.arrow.to_arrow,
        ([AF_T], ["i", "re_im"]),
        tf.TenferroValueError,
        "'re_im' is reserved",
    )
    row("to_arrow-dim_names-empty", tf.arrow.to_arrow, ([AF_T], ["i", ""]), tf.TenferroValueError, "non-empty strings")
    for arg, bad, fragment in (
        ("stack", "no", "stack must be True or False"),
        ("complex", "no", "complex must be None, True or False"),
        ("copy", 0, "copy must be None, True or False"),
        ("batch_axis", 0, "needs stack=True"),
    ):
        row(f"from_arrow-{arg}-{bad!r}", tf.arrow.from_arrow, (AF_COL,), tf.TenferroValueError, fragment, **{arg: bad})
    row("from_arrow-complex-on-odd-axis", tf.arrow.from_arrow, (AF_COL,), tf.ShapeError, "extent 2", complex=True)
    row("from_arrow-table", tf.arrow.from_arrow, (_pa.table({"x": AF_COL}),), tf.TenferroTypeError, "got Table")
    row(
        "tensor_info-plain-array",
        tf.arrow.tensor_info,
        (AF_COL.storage,),
        tf.TenferroTypeError,
        "expected an Arrow fixed_shape_tensor",
    )
