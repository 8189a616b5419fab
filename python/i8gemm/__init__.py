"""i8gemm for Python: the C ABI of libi8gemm.so through ctypes, and torch ops over it.

    import torch, i8gemm
    x_q, x_s, _ = torch.ops.i8gemm.quantize(x)                       # per token
    y = torch.ops.i8gemm.gemm(x_q, w_q, x_s, w_s, torch.bfloat16)    # w_q [N,K] int8, w_s [N]

Importing needs neither a GPU nor libcuda; the library is loaded on first use from
$I8GEMM_LIBRARY, the copy in the wheel (i8gemm/_bin/) or build/runtime/ beside python/.
Without torch only the ctypes layer (i8gemm._capi) and `python -m i8gemm` are available.
"""
from ._capi import Error, library_path, version  # noqa: F401

__version__ = "0.1.0"

try:
    import torch as _torch
except ImportError:  # the CLI forwarding and the ctypes layer work without torch
    _torch = None

if _torch is not None:
    from . import compat, ops  # noqa: F401  (registers torch.ops.i8gemm.*)
    from ._runtime import set_cache_path  # noqa: F401
    from .linear import W8A8Linear, quantize_weight  # noqa: F401

    gemm = _torch.ops.i8gemm.gemm
    gemm_out = _torch.ops.i8gemm.gemm_out

    def quantize(x, per_token=True, asymmetric=False):
        """(x_q, scale) or, asymmetric, (x_q, scale, zero_point): torch.ops.i8gemm.quantize."""
        x_q, scale, zp = _torch.ops.i8gemm.quantize(x, per_token, asymmetric)
        return (x_q, scale, zp) if asymmetric else (x_q, scale)

    def _index(device):
        d = _torch.device("cuda", _torch.cuda.current_device()) if device is None else _torch.device(device)
        return d.index if d.index is not None else _torch.cuda.current_device()

    def prepare(n, k, max_m, out_dtype=_torch.bfloat16, weight_layout="nk", act_scale="token",
                weight_scale="channel", bias=False, asymmetric=False, device=None):
        """Loads or JIT-compiles every kernel of one problem for M <= max_m (and the quantize
        kernels), before any CUDA graph capture. Raises i8gemm.Error with the library's message."""
        from . import _runtime
        key = ops.problem_key(n, k, out_dtype, weight_layout, act_scale, weight_scale, bias, asymmetric)
        _runtime.prepare(key, max_m, _index(device))

    def chosen(n, k, m, out_dtype=_torch.bfloat16, weight_layout="nk", act_scale="token",
               weight_scale="channel", bias=False, asymmetric=False, device=None):
        """What a prepared problem runs for m rows: kernel name, bucket, tuned or not, origin."""
        from . import _runtime
        key = ops.problem_key(n, k, out_dtype, weight_layout, act_scale, weight_scale, bias, asymmetric)
        return _runtime.chosen(key, m, _index(device))

    def weight_colsum(w_q):
        """colsum[n] = sum_k w_q[n,k] (int32 [N]) for asymmetric activations; once per weight,
        outside capture. w_q as in gemm: [N,K] row-major or the transpose of [K,N] row-major."""
        from . import _checks, _runtime
        _checks.check_cuda("weight_colsum", w_q)
        if w_q.dtype != _torch.int8 or w_q.dim() != 2:
            raise TypeError(f"i8gemm.weight_colsum: w_q must be a 2-D int8 tensor, got {w_q.dtype} {tuple(w_q.shape)}")
        layout = "nk" if w_q.is_contiguous() else "kn"
        key = ops.problem_key(w_q.shape[0], w_q.shape[1], weight_layout=layout, asymmetric=True)
        colsum = _torch.empty(w_q.shape[0], dtype=_torch.int32, device=w_q.device)
        _runtime.weight_colsum(key, w_q.device.index, w_q, colsum)
        return colsum
