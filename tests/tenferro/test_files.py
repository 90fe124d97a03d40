"""tenferro.files.atomic_write: the one atomic writer of the three packages (every file they
write goes through it), checked for what its callers rely on."""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from tenferro.files import atomic_write

ROOT = Path(__file__).resolve().parents[2]


def _write(path, text):
    with atomic_write(path) as tmp, open(tmp, "w") as fh:
        fh.write(text)


def test_a_new_file_gets_the_mode_open_gives(tmp_path):
    target = tmp_path / "new.txt"
    _write(target, "x")
    umask = os.umask(0)
    os.umask(umask)  # read only, in this test
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o666 & ~umask
    assert target.read_text() == "x"


def test_a_replaced_file_keeps_its_mode_and_no_temporary_is_left(tmp_path):
    target = tmp_path / "old.txt"
    target.write_text("old")
    os.chmod(target, 0o640)
    _write(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt"]


@pytest.mark.parametrize("exc", [ValueError, KeyboardInterrupt])
def test_a_failed_write_leaves_the_target_and_no_temporary(tmp_path, exc):
    target = tmp_path / "keep.txt"
    target.write_text("keep")
    with pytest.raises(exc):
        with atomic_write(target) as tmp, open(tmp, "w") as fh:
            fh.write("half")
            raise exc("stop")
    assert target.read_text() == "keep"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_the_file_and_its_directory_are_flushed(tmp_path, monkeypatch):
    synced = []
    real = os.fsync

    def fsync(fd):
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    _write(tmp_path / "f.txt", "x")
    assert synced == [False, True]  # the file before the rename, the directory after it


def test_a_directory_where_no_file_can_be_created_raises_oserror(tmp_path):
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc")
    with pytest.raises(OSError):
        with atomic_write("/proc/self/x.txt"):
            pass


def test_exactly_one_file_of_the_three_packages_replaces_files():
    callers = []
    for package in ("tidu", "tenferro", "tensor4all"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("replace", "rename")
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "os"
                ):
                    callers.append(str(path.relative_to(ROOT)))
    assert sorted(set(callers)) == ["tenferro/files.py"], callers


def test_the_one_memory_query_and_the_one_optional_importer():
    from tenferro.checks import available_memory, import_optional, install_hint, physical_memory

    phys, avail = physical_memory(), available_memory()
    if phys is not None:  # POSIX: both known, what is available at most what there is
        assert avail is not None and 0 < avail <= phys
    assert import_optional("json", RuntimeError, "unused").dumps([1]) == "[1]"

    class Missing(ImportError):
        pass

    with pytest.raises(Missing, match="the 'gpu' extra") as info:
        import_optional(("json", "no_such_module_here"), Missing, f"op: {install_hint('gpu')}")
    assert isinstance(info.value.__cause__, ImportError)
    assert install_hint("arrow") == "install the 'arrow' extra (pip install 'tidu-tenferro[arrow]')"
