"""Per-device contexts and prepared problems, and the launches behind the torch ops.

One i8gemm context per CUDA device, created on first use. A problem is prepared (kernels
loaded or JIT-compiled, workspaces allocated) the first time it is run with more rows than it
was prepared for, outside any capture; while the current stream is capturing nothing is
prepared and the run fails with the library's NOT_PREPARED message. `prepare` does it ahead.
"""
import ctypes
import threading

import torch

from . import _capi as C

_OUT_CODES = {torch.bfloat16: C.OUT_BF16, torch.float16: C.OUT_F16, torch.float32: C.OUT_F32,
              torch.int32: C.OUT_I32}
_IN_CODES = {torch.bfloat16: C.IN_BF16, torch.float16: C.IN_F16, torch.float32: C.IN_F32}
_LAYOUTS = {"nk": C.WEIGHT_NK, "kn": C.WEIGHT_KN}
_ACT = {"token": C.SCALE_PER_TOKEN, "tensor": C.SCALE_PER_TENSOR}
_WGT = {"channel": C.SCALE_PER_CHANNEL, "tensor": C.SCALE_PER_TENSOR}


class _Device:
    def __init__(self, index, cache_path):
        handle = ctypes.c_void_p()
        path = cache_path.encode() if cache_path else None
        C.check(C.lib().i8gemm_create(index, path, ctypes.byref(handle)))
        self.index = index
        self.handle = handle
        self.prepared = {}  # problem key -> max_m it was prepared for
        self.problems = {}  # problem key -> C.Problem (kept: the library reads it on each call)
        self.lock = threading.Lock()


_devices = {}
_devices_lock = threading.Lock()
_cache_path = None


def set_cache_path(path):
    """The cache file for contexts created from now on (default: $I8GEMM_CACHE, then
    ~/.cache/i8gemm/cache.sqlite)."""
    global _cache_path
    _cache_path = path


def device_state(index):
    d = _devices.get(index)
    if d is None:
        with _devices_lock:
            d = _devices.get(index)
            if d is None:
                d = _devices[index] = _Device(index, _cache_path)
    return d


def problem_key(n, k, layout, act, wscale, out, bias, asym):
    return (int(n), int(k), layout, act, wscale, out, bool(bias), bool(asym))


def _problem(d, key):
    p = d.problems.get(key)
    if p is None:
        p = d.problems[key] = C.Problem(*key[:6], int(key[6]), int(key[7]))
    return p


def _capturing(index):
    """Whether device `index`'s current stream is capturing (only asked on the slow paths)."""
    if not torch.cuda.is_available():
        return False
    with torch.cuda.device(index):
        return torch.cuda.is_current_stream_capturing()


def ensure_prepared(index, key, m):
    """Prepares `key` on device `index` for at least m rows unless it already is; never while
    the current stream captures (the run then reports NOT_PREPARED)."""
    d = device_state(index)
    if d.prepared.get(key, 0) >= m:
        return d
    with d.lock:
        have = d.prepared.get(key, 0)
        if have >= m or _capturing(index):
            return d
        max_m = max(have, 1 << max(0, int(m) - 1).bit_length())  # next power of two
        C.check(C.lib().i8gemm_prepare(d.handle, ctypes.byref(_problem(d, key)), max_m))
        d.prepared[key] = max_m
    return d


def prepare(key, max_m, index):
    """Prepares a problem for every M up to max_m (call before capture)."""
    d = device_state(index)
    with d.lock:
        if d.prepared.get(key, 0) < max_m:
            C.check(C.lib().i8gemm_prepare(d.handle, ctypes.byref(_problem(d, key)), int(max_m)))
            d.prepared[key] = int(max_m)


def prepared_max_m(key, index):
    d = _devices.get(index)
    return d.prepared.get(key, 0) if d else 0


def chosen(key, m, index):
    d = device_state(index)
    c = C.Choice()
    C.check(C.lib().i8gemm_chosen(d.handle, ctypes.byref(_problem(d, key)), int(m), ctypes.byref(c)))
    return {"kernel": c.kernel.decode(), "bucket_max_m": c.bucket_max_m,
            "tuned": c.origin == 0, "binary": ("cached", "compiled", "cublaslt")[c.binary]}


def _stream(index):
    return ctypes.c_void_p(torch.cuda.current_stream(index).cuda_stream)


def _ptr(t):
    return None if t is None else t.data_ptr()


def run(key, m, index, out, x_q, w_q, x_scale, w_scale, bias, x_zp, w_colsum):
    d = ensure_prepared(index, key, m)
    a = C.Args(m, _ptr(x_q), _ptr(w_q), _ptr(x_scale), _ptr(w_scale), _ptr(bias), _ptr(x_zp),
               _ptr(w_colsum), _ptr(out))
    status = C.lib().i8gemm_run(d.handle, ctypes.byref(_problem(d, key)), ctypes.byref(a), _stream(index))
    C.check(status, _hint(status, index))


def _hint(status, index):
    if status == C.NOT_PREPARED or (status == C.INVALID_ARGUMENT and _capturing(index)):
        return ("the current stream is capturing: run the op once, or call i8gemm.prepare(), "
                "for every M before capture")
    return ""


def quantize(index, x, x_q, scale, zero_point, per_token, asymmetric):
    d = device_state(index)
    m, k = x.shape
    q = C.QuantizeArgs(m, k, _IN_CODES[x.dtype], _ptr(x), C.SCALE_PER_TOKEN if per_token else C.SCALE_PER_TENSOR,
                       int(asymmetric), _ptr(x_q), _ptr(scale), _ptr(zero_point) if asymmetric else None)
    status = C.lib().i8gemm_quantize(d.handle, ctypes.byref(q), _stream(index))
    C.check(status, _hint(status, index))


def weight_colsum(key, index, w_q, colsum):
    d = device_state(index)
    C.check(C.lib().i8gemm_weight_colsum(d.handle, ctypes.byref(_problem(d, key)), _ptr(w_q),
                                         _ptr(colsum), _stream(index)))
