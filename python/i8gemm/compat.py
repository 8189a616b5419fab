"""Drop-ins for the W8A8 int8 GEMM calls vLLM and SGLang make, with their argument layouts:

    from vllm._custom_ops import cutlass_scaled_mm   ->  from i8gemm.compat import cutlass_scaled_mm
    torch.ops._C.cutlass_scaled_mm(out, a, b, ...)   ->  torch.ops.i8gemm.cutlass_scaled_mm(out, a, b, ...)
    from sgl_kernel import int8_scaled_mm            ->  from i8gemm.compat import int8_scaled_mm

a: [M,K] int8 row-major; b: [K,N] int8 as they lay it out (column-major, the transpose of the
[N,K] checkpoint weight; a row-major [K,N] works too); scale_a: [M,1], [M] or [1] float32;
scale_b: [N,1], [1,N], [N] or [1] float32; bias: [N] in the output dtype (as vLLM requires) or
float32. int8 only: an fp8 `a` is refused (TypeError), not served.
"""
from typing import Optional

import torch

from . import ops


def _bias32(bias):
    # i8gemm adds a float32 bias in the fp32 epilogue, as CUTLASS's epilogue does after reading
    # a bf16/f16 bias; converting here is one small kernel on the current stream.
    return None if bias is None or bias.dtype == torch.float32 else bias.float()


@torch.library.custom_op("i8gemm::cutlass_scaled_mm", mutates_args=("out",))
def cutlass_scaled_mm_out(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor,
                          scale_b: torch.Tensor, bias: Optional[torch.Tensor] = None) -> None:
    """torch.ops._C.cutlass_scaled_mm's signature: writes out[M,N]."""
    bias32 = _bias32(bias)
    ops._launch("cutlass_scaled_mm", out, a, b.t(), scale_a, scale_b,
                bias if bias32 is None else bias32, None, None)


@cutlass_scaled_mm_out.register_fake
def _(out, a, b, scale_a, scale_b, bias=None):
    bias32 = None if bias is None else torch.empty_like(bias, dtype=torch.float32)
    ops._checks.check_gemm("cutlass_scaled_mm", a, b.t(), scale_a, scale_b, bias32, None, None, out.dtype, out)


def cutlass_scaled_mm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor,
                      out_dtype: torch.dtype, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """vllm._custom_ops.cutlass_scaled_mm's signature (int8 a and b)."""
    out = torch.empty((a.shape[0], b.shape[1]), dtype=out_dtype, device=a.device)
    torch.ops.i8gemm.cutlass_scaled_mm(out, a, b, scale_a, scale_b, bias)
    return out


def int8_scaled_mm(mat_a: torch.Tensor, mat_b: torch.Tensor, scales_a: torch.Tensor, scales_b: torch.Tensor,
                   out_dtype: torch.dtype, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    """sgl_kernel.int8_scaled_mm's signature: mat_b [K,N] column-major."""
    return cutlass_scaled_mm(mat_a, mat_b, scales_a, scales_b, out_dtype, bias)
