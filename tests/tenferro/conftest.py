"""Make the shared test helpers in this folder (``specs``) importable."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

import pytest  # noqa: E402
import tidu  # noqa: E402

# Every transpose rule's result is checked against its arguments' avals in the tests.
tidu.debug_checks(True)


@pytest.fixture(scope="module")
def native_jit_cache(tmp_path_factory, request):
    """The native backend's generated sources and machine code in a directory of the test module
    (``pytestmark = [..., pytest.mark.usefixtures("native_jit_cache")]``)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("TENFERRO_JIT_CACHE", str(tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])))
    yield
    mp.undo()
