"""Write/read throughput of tenferro tensor files (Arrow IPC, Parquet) against numpy.save/numpy.load.

Run: ``python benchmarks/arrow.py [--size-gb 1.0] [--repeat 3] [--dir DIR]`` (needs the
``arrow`` extra). One batch of float64 tensors of shape (64, 64, 32) (1 MiB each,
trailing batch axis, ~1 GB in all) is written and read back by each method in the
same run; throughput is tensor bytes / wall time in GB/s (1 GB = 1e9 bytes), the
median of ``--repeat`` rounds, and the ratio is against numpy.save / numpy.load.

* ``write``: the file is complete on return (no fsync for any method: the page cache
  absorbs it, so this is closer to memory bandwidth than disk bandwidth).
* ``read (into memory)``: every byte is read into process memory
  (``tenferro.load(mmap=False)``, ``numpy.load``).
* ``read (memory-mapped) + sum``: open with memory mapping and touch every byte
  (``tenferro.load`` default, ``numpy.load(mmap_mode="r")``), the file being in the page
  cache; ``open only`` is the time to get the tensors without touching them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from typing import Any, Callable

import numpy as np

import tenferro as tf

SHAPE = (64, 64, 32)


def interleaved(cases: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Median wall time of each case; rounds visit the cases in turn, and dirty pages are flushed
    (``os.sync``, untimed) before every measurement, so no case pays for another's write-back."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, fn in cases.items():
            os.sync()
            t0 = time.perf_counter()
            out = fn()
            times[name].append(time.perf_counter() - t0)
            del out
    return {name: statistics.median(ts) for name, ts in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=1.0, help="batch size in GB (default 1.0)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per measurement; the median is shown (default 3)")
    parser.add_argument("--dir", default=None, help="directory for the files (default: a temporary directory)")
    args = parser.parse_args()

    per_tensor = int(np.prod(SHAPE)) * 8
    n = max(1, round(args.size_gb * 1e9 / per_tensor))
    rng = np.random.default_rng(0)
    data = np.asfortranarray(rng.standard_normal((*SHAPE, n)))
    batch = tf.asarray(data)  # shares data: the canonical (F-contiguous) trailing-batch tensor
    nbytes = data.nbytes
    print(f"batch: {n} float64 tensors of shape {SHAPE}, {nbytes / 1e9:.3f} GB; median of {args.repeat} rounds")

    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        npy, ipc, parq, raw, lst = (
            os.path.join(d, f) for f in ("b.npy", "b.arrow", "b.parquet", "b.raw.parquet", "b.list.arrow")
        )
        items = [tf.Tensor._wrap(data[..., k]) for k in range(n)]
        col = lambda: {"b": tf.arrow.to_arrow(batch, batch_axis=-1)}  # noqa: E731  (zero-copy column)
        writes = interleaved(
            {
                "numpy.save": lambda: np.save(npy, data),
                "tenferro.save arrow (batch tensor, zero-copy)": lambda: tf.save(ipc, col(), format="arrow"),
                "tenferro.save arrow (list of tensors: one copy)": lambda: tf.save(lst, {"b": items}, format="arrow"),  # noqa: F821 (del after)
                "tenferro.save parquet (snappy)": lambda: tf.save(parq, col(), format="parquet"),
                "tenferro.save parquet (uncompressed)": lambda: tf.save(
                    raw, col(), format="parquet", compression="none"
                ),
            },
            args.repeat,
        )
        del items
        reads = interleaved(
            {
                "numpy.load": lambda: np.load(npy),
                "tenferro.load arrow (mmap=False)": lambda: tf.load(ipc, mmap=False, stack=True),
                "tenferro.load parquet (snappy)": lambda: tf.load(parq, stack=True),
                "tenferro.load parquet (uncompressed)": lambda: tf.load(raw, stack=True),
            },
            args.repeat,
        )
        mapped = interleaved(
            {
                "numpy.load(mmap_mode='r') + sum": lambda: float(np.load(npy, mmap_mode="r").sum()),
                "tenferro.load arrow (mmap) + sum": lambda: float(np.asarray(tf.load(ipc, stack=True)["b"]).sum()),
                "numpy.load(mmap_mode='r') open only": lambda: np.load(npy, mmap_mode="r"),
                "tenferro.load arrow (mmap) open only": lambda: tf.load(ipc, stack=True),
            },
            args.repeat,
        )
        sizes = {
            name: os.path.getsize(p) / 1e9
            for name, p in (("npy", npy), ("arrow", ipc), ("parquet", parq), ("parquet uncompressed", raw))
        }

    rows: list[tuple[str, float, float | None]] = []
    for kind, group, base in (
        ("write", writes, "numpy.save"),
        ("read", reads, "numpy.load"),
        ("mmap", {k: v for k, v in mapped.items() if "sum" in k}, "numpy.load(mmap_mode='r') + sum"),
    ):
        for name, t in group.items():
            rows.append((f"{kind:6s} {name}", nbytes / t / 1e9, None if name == base else group[base] / t))
    print(f"{'operation':58s} {'GB/s':>7s} {'vs numpy':>9s}")
    for name, rate, ratio in rows:
        print(f"{name:58s} {rate:7.2f} {'' if ratio is None else f'{ratio:8.2f}x':>9s}")
    open_np, open_tf = mapped["numpy.load(mmap_mode='r') open only"], mapped["tenferro.load arrow (mmap) open only"]
    print(f"open only (memory-mapped): numpy {open_np * 1e3:.2f} ms, tenferro arrow {open_tf * 1e3:.2f} ms")
    print("file sizes (GB): " + ", ".join(f"{k} {v:.3f}" for k, v in sizes.items()))
    print("ratio = numpy time / tenferro time (above 1: tenferro is faster)")


if __name__ == "__main__":
    main()
