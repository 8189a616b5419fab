"""The installed package: import without a GPU, the library it loads, errors carrying the
library's own message, and `python -m i8gemm` forwarding to the CLI."""
import ctypes
import os
import subprocess
import sys

import pytest
import torch

import i8gemm
from i8gemm import _capi as C

NO_GPU = not torch.cuda.is_available()


def test_version_matches_the_loaded_library():
    assert i8gemm.__version__ == i8gemm.version()


def test_library_comes_from_the_wheel_when_installed():
    path = i8gemm.library_path()
    if os.environ.get("I8GEMM_EXPECT_WHEEL") == "1":
        assert path == os.path.join(os.path.dirname(i8gemm.__file__), "_bin", "libi8gemm.so.0")
    assert os.path.exists(path)


def _maps_libcuda_after(code):
    probe = code + "; import sys; sys.exit(3 if 'libcuda.so' in open('/proc/self/maps').read() else 0)"
    rc = subprocess.run([sys.executable, "-c", probe]).returncode
    assert rc in (0, 3), f"{code!r} failed with status {rc}"
    return rc == 3


def test_importing_needs_no_libcuda():
    # Where torch's own import maps libcuda (some CUDA builds do) there is nothing left to see.
    if _maps_libcuda_after("import torch"):
        pytest.skip("importing torch alone maps libcuda here")
    assert not _maps_libcuda_after("import i8gemm; i8gemm.version()")


@pytest.mark.skipif(not NO_GPU, reason="needs a machine without a CUDA device")
def test_no_device_is_an_error_with_the_library_message():
    with pytest.raises(i8gemm.Error, match="i8gemm_create: no CUDA driver") as e:
        i8gemm.prepare(2560, 4096, 16, device=0)
    assert e.value.status == C.NO_DEVICE


def test_library_argument_errors_are_surfaced_verbatim():
    with pytest.raises(i8gemm.Error, match="i8gemm_prepare.*context is null") as e:
        C.check(C.lib().i8gemm_prepare(None, ctypes.byref(C.Problem(64, 64)), 16))
    assert e.value.status == C.INVALID_ARGUMENT
    with pytest.raises(i8gemm.Error, match="level 9 is not one of"):
        C.check(C.lib().i8gemm_set_log_level(9))


def test_a_missing_library_named_by_env_is_an_import_error_naming_it(tmp_path):
    env = dict(os.environ, I8GEMM_LIBRARY=str(tmp_path / "nope.so"))
    r = subprocess.run([sys.executable, "-c", "import i8gemm; i8gemm.version()"], env=env,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "nope.so (absent)" in r.stderr and "I8GEMM_LIBRARY" in r.stderr


def run_module(*argv):
    return subprocess.run([sys.executable, "-m", "i8gemm", *argv], capture_output=True, text=True)


def test_python_m_forwards_help_to_the_cli():
    r = run_module("--help")
    assert r.returncode == 0, r.stderr
    for sub in ("tune", "bench", "inspect"):
        assert sub in r.stdout


def test_python_m_forwards_subcommands_and_exit_codes():
    r = run_module("inspect", "--help")
    assert r.returncode == 0 and "list" in r.stdout
    assert run_module("no-such-command").returncode != 0


def test_python_m_says_where_it_looked_for_a_missing_cli(tmp_path):
    env = dict(os.environ, I8GEMM_CLI=str(tmp_path / "i8gemm"))
    r = subprocess.run([sys.executable, "-m", "i8gemm", "--help"], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "is not an executable file" in r.stderr
