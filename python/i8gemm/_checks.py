"""Argument checks shared by the real and the fake (meta) implementations of the ops.

They read only shapes, strides, dtypes and devices, so they run on fake tensors at trace time
and never synchronize. What only the library can judge (K and N limits, pointer alignment, the
M a problem was prepared for, the stream's context) it reports itself, in its own words.
"""
import torch

OUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32, torch.int32)
IN_DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def _fail(op, msg, kind=ValueError):
    raise kind(f"i8gemm.{op}: {msg}")


def _dtype(op, name, t, want):
    if t.dtype != want:
        _fail(op, f"{name} must be {want}, got {t.dtype}", TypeError)


def _contiguous(op, name, t, what):
    if not t.is_contiguous():
        _fail(op, f"{name} must be contiguous ({what}), got strides {tuple(t.stride())}")


def _granularity(numel, rows, per_row, whole):
    """per_row where there is one value per row, whole for one value, None where both hold."""
    if rows == 1 and numel == 1:
        return None
    return per_row if numel == rows else whole if numel == 1 else False


class GemmSpec:
    """What a gemm call is: sizes, weight layout, scale granularities (None: M == 1 and one
    value, either fits), output type, bias, asymmetric."""

    __slots__ = ("m", "n", "k", "layout", "act", "wscale", "out_dtype", "bias", "asym")


def check_gemm(op, x_q, w_q, x_scale, w_scale, bias, x_zp, w_colsum, out_dtype, out=None):
    s = GemmSpec()
    _dtype(op, "x_q", x_q, torch.int8)
    _dtype(op, "w_q", w_q, torch.int8)
    if x_q.dim() != 2 or w_q.dim() != 2:
        _fail(op, f"x_q [M,K] and w_q [N,K] must be 2-D, got {tuple(x_q.shape)} and {tuple(w_q.shape)}")
    s.m, s.k = x_q.shape
    s.n = w_q.shape[0]
    if w_q.shape[1] != s.k:
        _fail(op, f"w_q is [N,K]={list(w_q.shape)} but x_q is [M,K]={list(x_q.shape)}: K differs")
    _contiguous(op, "x_q", x_q, "row-major [M,K]")
    if w_q.is_contiguous():
        s.layout = "nk"
    elif w_q.t().is_contiguous():
        s.layout = "kn"  # a [K,N] row-major weight seen as [N,K]
    else:
        _fail(op, "w_q must be [N,K] row-major (nk) or the transpose of a [K,N] row-major tensor (kn), "
              f"got strides {tuple(w_q.stride())}")
    if out_dtype not in OUT_DTYPES:
        _fail(op, f"the output must be bfloat16, float16, float32 or int32, got {out_dtype}", TypeError)
    s.out_dtype = out_dtype
    devices = {t.device for t in (x_q, w_q, x_scale, w_scale, bias, x_zp, w_colsum, out) if t is not None}
    if len(devices) > 1:
        _fail(op, f"all tensors must be on one device, got {sorted(str(d) for d in devices)}")
    s.act, s.wscale = "token", "channel"
    if out_dtype != torch.int32:
        for name, t, count, what in (("x_scale", x_scale, s.m, "M"), ("w_scale", w_scale, s.n, "N")):
            _dtype(op, name, t, torch.float32)
            _contiguous(op, name, t, f"[{what}] or [1]")
        s.act = _granularity(x_scale.numel(), s.m, "token", "tensor")
        if s.act is False:
            _fail(op, f"x_scale must hold M={s.m} (per token) or 1 (per tensor) values, got {x_scale.numel()}")
        s.wscale = _granularity(w_scale.numel(), s.n, "channel", "tensor")
        if s.wscale is None:  # N == 1: either fits; weights are prepared per channel
            s.wscale = "channel"
        if s.wscale is False:
            _fail(op, f"w_scale must hold N={s.n} (per channel) or 1 (per tensor) values, got {w_scale.numel()}")
    s.bias = bias is not None
    if s.bias:
        _dtype(op, "bias", bias, torch.float32)
        if bias.numel() != s.n or not bias.is_contiguous():
            _fail(op, f"bias must be a contiguous [N={s.n}] tensor, got shape {tuple(bias.shape)}")
    if (x_zp is None) != (w_colsum is None):
        _fail(op, "x_zero_point and w_colsum go together (asymmetric activations): pass both or neither")
    s.asym = x_zp is not None
    if s.asym:
        _dtype(op, "x_zero_point", x_zp, torch.int32)
        _dtype(op, "w_colsum", w_colsum, torch.int32)
        want = x_scale.numel() if out_dtype != torch.int32 else x_zp.numel()
        if x_zp.numel() != want or x_zp.numel() not in (1, s.m) or not x_zp.is_contiguous():
            _fail(op, f"x_zero_point must be contiguous with as many values as x_scale (M={s.m} or 1), "
                  f"got shape {tuple(x_zp.shape)}")
        if out_dtype == torch.int32:
            s.act = _granularity(x_zp.numel(), s.m, "token", "tensor")
        if w_colsum.numel() != s.n or not w_colsum.is_contiguous():
            _fail(op, f"w_colsum must be a contiguous [N={s.n}] tensor (i8gemm.weight_colsum), "
                  f"got shape {tuple(w_colsum.shape)}")
    if out is not None:
        if out.dim() != 2 or tuple(out.shape) != (s.m, s.n):
            _fail(op, f"out must be [M,N]=[{s.m},{s.n}], got {list(out.shape)}")
        _contiguous(op, "out", out, "row-major [M,N]")
    return s


def check_quantize(op, x):
    if x.dtype not in IN_DTYPES:
        _fail(op, f"x must be bfloat16, float16 or float32, got {x.dtype}", TypeError)
    if x.dim() != 2:
        _fail(op, f"x must be 2-D [M,K], got shape {tuple(x.shape)}")
    _contiguous(op, "x", x, "row-major [M,K]")


def check_cuda(op, t):
    if t.device.type != "cuda":
        _fail(op, f"tensors must be on a CUDA device, got {t.device}")
