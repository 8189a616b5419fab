"""The torch ops: torch.ops.i8gemm.gemm_out, .gemm and .quantize, each with a fake impl.

Each launches on torch's current stream of the tensors' device, never synchronizes, and
allocates only its outputs (gemm, quantize), so it records under CUDA graph capture once its
problem is prepared; the fake impls give torch.compile shapes and dtypes without a GPU.
Layouts: x_q [M,K] row-major; w_q [N,K] as nn.Linear's weight, either row-major (the "nk"
layout) or the transpose view of a [K,N] row-major tensor ("kn"); out [M,N] row-major.
"""
from typing import Optional

import torch

from . import _capi as C
from . import _checks, _runtime

_LAYOUT = {"nk": C.WEIGHT_NK, "kn": C.WEIGHT_KN}
_ACT = {"token": C.SCALE_PER_TOKEN, "tensor": C.SCALE_PER_TENSOR}
_WGT = {"channel": C.SCALE_PER_CHANNEL, "tensor": C.SCALE_PER_TENSOR}
_OUT = {torch.bfloat16: C.OUT_BF16, torch.float16: C.OUT_F16, torch.float32: C.OUT_F32, torch.int32: C.OUT_I32}


def problem_key(n, k, out_dtype=torch.bfloat16, weight_layout="nk", act_scale="token",
                weight_scale="channel", bias=False, asymmetric=False):
    return _runtime.problem_key(n, k, _LAYOUT[weight_layout], _ACT[act_scale], _WGT[weight_scale],
                                _OUT[out_dtype], bias, asymmetric)


def _key(s, index):
    if s.act is not None:
        return problem_key(s.n, s.k, s.out_dtype, s.layout, s.act, s.wscale, s.bias, s.asym)
    # M == 1 with one activation scale: per token and per tensor give the same numbers, so take
    # whichever is prepared (per token first) rather than preparing the other inside a capture.
    for act in ("token", "tensor"):
        key = problem_key(s.n, s.k, s.out_dtype, s.layout, act, s.wscale, s.bias, s.asym)
        if _runtime.prepared_max_m(key, index) >= 1:
            return key
    return problem_key(s.n, s.k, s.out_dtype, s.layout, "token", s.wscale, s.bias, s.asym)


def _launch(op, out, x_q, w_q, x_scale, w_scale, bias, x_zp, w_colsum):
    s = _checks.check_gemm(op, x_q, w_q, x_scale, w_scale, bias, x_zp, w_colsum, out.dtype, out)
    _checks.check_cuda(op, x_q)
    if s.m == 0:
        return
    index = x_q.device.index
    _runtime.run(_key(s, index), s.m, index, out, x_q, w_q, x_scale, w_scale, bias, x_zp, w_colsum)


@torch.library.custom_op("i8gemm::gemm_out", mutates_args=("out",))
def gemm_out(out: torch.Tensor, x_q: torch.Tensor, w_q: torch.Tensor, x_scale: torch.Tensor,
             w_scale: torch.Tensor, bias: Optional[torch.Tensor] = None,
             x_zero_point: Optional[torch.Tensor] = None, w_colsum: Optional[torch.Tensor] = None) -> None:
    """out[M,N] = dequant(x_q[M,K] . w_q[N,K]^T), written in place; out's dtype picks the output."""
    _launch("gemm_out", out, x_q, w_q, x_scale, w_scale, bias, x_zero_point, w_colsum)


@gemm_out.register_fake
def _(out, x_q, w_q, x_scale, w_scale, bias=None, x_zero_point=None, w_colsum=None):
    _checks.check_gemm("gemm_out", x_q, w_q, x_scale, w_scale, bias, x_zero_point, w_colsum, out.dtype, out)


@torch.library.custom_op("i8gemm::gemm", mutates_args=())
def gemm(x_q: torch.Tensor, w_q: torch.Tensor, x_scale: torch.Tensor, w_scale: torch.Tensor,
         out_dtype: torch.dtype = torch.bfloat16, bias: Optional[torch.Tensor] = None,
         x_zero_point: Optional[torch.Tensor] = None, w_colsum: Optional[torch.Tensor] = None) -> torch.Tensor:
    """gemm_out into a new [M,N] tensor of out_dtype."""
    s = _checks.check_gemm("gemm", x_q, w_q, x_scale, w_scale, bias, x_zero_point, w_colsum, out_dtype)
    out = torch.empty((s.m, s.n), dtype=out_dtype, device=x_q.device)
    _launch("gemm", out, x_q, w_q, x_scale, w_scale, bias, x_zero_point, w_colsum)
    return out


@gemm.register_fake
def _(x_q, w_q, x_scale, w_scale, out_dtype=torch.bfloat16, bias=None, x_zero_point=None, w_colsum=None):
    s = _checks.check_gemm("gemm", x_q, w_q, x_scale, w_scale, bias, x_zero_point, w_colsum, out_dtype)
    return x_q.new_empty((s.m, s.n), dtype=out_dtype)


def _quantize_outputs(x, per_token, asymmetric):
    m = x.shape[0]
    shape = (m, 1) if per_token else (1,)
    x_q = torch.empty(x.shape, dtype=torch.int8, device=x.device)
    scale = torch.empty(shape, dtype=torch.float32, device=x.device)
    zp = torch.empty(shape if asymmetric else (0,), dtype=torch.int32, device=x.device)
    return x_q, scale, zp


@torch.library.custom_op("i8gemm::quantize", mutates_args=())
def quantize(x: torch.Tensor, per_token: bool = True,
             asymmetric: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x[M,K] (bf16/f16/f32) -> (x_q int8 [M,K], scale f32 [M,1] or [1], zero_point int32 of
    the scale's shape when asymmetric, else empty). Formulas: docs/quantization.md."""
    _checks.check_quantize("quantize", x)
    _checks.check_cuda("quantize", x)
    x_q, scale, zp = _quantize_outputs(x, per_token, asymmetric)
    if x.shape[0] > 0:
        _runtime.quantize(x.device.index, x, x_q, scale, zp, per_token, asymmetric)
    return x_q, scale, zp


@quantize.register_fake
def _(x, per_token=True, asymmetric=False):
    _checks.check_quantize("quantize", x)
    return _quantize_outputs(x, per_token, asymmetric)
