"""ctypes view of the C ABI (include/i8gemm/i8gemm.h): structs, statuses, loading, errors.

Nothing here needs torch, a GPU or libcuda: the library opens the driver itself, at its first
call that needs one (i8gemm_create), and says so in its message when there is none.
"""
import ctypes
import os
import threading

# i8gemm_status
SUCCESS = 0
INVALID_ARGUMENT = 1
NO_DEVICE = 2
UNSUPPORTED = 3
NOT_PREPARED = 4
COMPILE = 5
CACHE = 6
CUDA = 7
INTERNAL = 8
OUT_OF_MEMORY = 9
NOT_IN_CACHE = 10

WEIGHT_NK, WEIGHT_KN = 0, 1
SCALE_PER_TENSOR, SCALE_PER_TOKEN, SCALE_PER_CHANNEL = 0, 1, 2
OUT_BF16, OUT_F16, OUT_F32, OUT_I32 = 0, 1, 2, 3
IN_BF16, IN_F16, IN_F32 = 0, 1, 2

_HERE = os.path.dirname(os.path.abspath(__file__))
_SONAME = "libi8gemm.so.0"


class Error(RuntimeError):
    """A status other than success from the library, with its message (i8gemm_last_error)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Problem(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int64), ("k", ctypes.c_int64), ("weight_layout", ctypes.c_int),
                ("act_scale", ctypes.c_int), ("weight_scale", ctypes.c_int), ("out", ctypes.c_int),
                ("has_bias", ctypes.c_int), ("asymmetric", ctypes.c_int)]


class Args(ctypes.Structure):
    _fields_ = [("m", ctypes.c_int64), ("x", ctypes.c_void_p), ("w", ctypes.c_void_p),
                ("x_scale", ctypes.c_void_p), ("w_scale", ctypes.c_void_p), ("bias", ctypes.c_void_p),
                ("x_zero_point", ctypes.c_void_p), ("w_colsum", ctypes.c_void_p), ("out", ctypes.c_void_p)]


class QuantizeArgs(ctypes.Structure):
    _fields_ = [("m", ctypes.c_int64), ("k", ctypes.c_int64), ("in_type", ctypes.c_int),
                ("x", ctypes.c_void_p), ("granularity", ctypes.c_int), ("asymmetric", ctypes.c_int),
                ("x_q", ctypes.c_void_p), ("scale", ctypes.c_void_p), ("zero_point", ctypes.c_void_p)]


class Choice(ctypes.Structure):
    _fields_ = [("kernel", ctypes.c_char * 256), ("bucket_max_m", ctypes.c_int64),
                ("origin", ctypes.c_int), ("binary", ctypes.c_int)]


class Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("strict", ctypes.c_int)]


_P = ctypes.c_void_p
_SIGNATURES = {
    "i8gemm_create": ([ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(_P)], ctypes.c_int),
    "i8gemm_create_with_options": ([ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(Options),
                                    ctypes.POINTER(_P)], ctypes.c_int),
    "i8gemm_destroy": ([_P], None),
    "i8gemm_prepare": ([_P, ctypes.POINTER(Problem), ctypes.c_int64], ctypes.c_int),
    "i8gemm_run": ([_P, ctypes.POINTER(Problem), ctypes.POINTER(Args), _P], ctypes.c_int),
    "i8gemm_chosen": ([_P, ctypes.POINTER(Problem), ctypes.c_int64, ctypes.POINTER(Choice)], ctypes.c_int),
    "i8gemm_weight_colsum": ([_P, ctypes.POINTER(Problem), _P, _P, _P], ctypes.c_int),
    "i8gemm_quantize": ([_P, ctypes.POINTER(QuantizeArgs), _P], ctypes.c_int),
    "i8gemm_set_log_level": ([ctypes.c_int], ctypes.c_int),
    "i8gemm_last_error": ([], ctypes.c_char_p),
    "i8gemm_version": ([], ctypes.c_char_p),
    "i8gemm_status_string": ([ctypes.c_int], ctypes.c_char_p),
}


def library_candidates():
    """Where the library is looked for, in order: $I8GEMM_LIBRARY, the copy in the wheel, the
    build tree beside this source tree (python/ next to build/), then the dynamic loader."""
    env = os.environ.get("I8GEMM_LIBRARY")
    if env:
        return [env]  # named explicitly: nothing else is tried
    return [os.path.join(_HERE, "_bin", _SONAME),
            os.path.join(_HERE, "..", "..", "build", "runtime", _SONAME),
            _SONAME]


_lib = None
_lib_path = None
_lock = threading.Lock()


def lib():
    """The loaded library (loaded on first use), with argument types declared."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in library_candidates():
            if os.sep in path and not os.path.exists(path):
                tried.append(f"{path} (absent)")
                continue
            try:
                handle = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({e})")
                continue
            for name, (argtypes, restype) in _SIGNATURES.items():
                fn = getattr(handle, name)
                fn.argtypes, fn.restype = argtypes, restype
            _lib_path = os.path.realpath(path) if os.sep in path else path
            _lib = handle
            return _lib
        raise ImportError("i8gemm: libi8gemm.so could not be loaded; tried " + "; ".join(tried) +
                          ". Set I8GEMM_LIBRARY to the library's path.")


def library_path():
    lib()
    return _lib_path


def last_error():
    return lib().i8gemm_last_error().decode(errors="replace")


def status_string(status):
    return lib().i8gemm_status_string(status).decode()


def check(status, hint=""):
    """Raises Error carrying the library's message for any status but success. Call it on the
    thread that made the call: the message is the calling thread's."""
    if status != SUCCESS:
        msg = f"i8gemm: {status_string(status)}: {last_error()}"
        raise Error(status, msg + (f" ({hint})" if hint else ""))


def version():
    return lib().i8gemm_version().decode()
