"""A W8A8 linear layer over i8gemm, in the shape of vLLM's and SGLang's integration:

- weights quantized once, per output channel (symmetric int8, [N,K] row-major);
- activations quantized per token on every call (torch.ops.i8gemm.quantize);
- every M bucket up to max_m prepared ahead (`prepare`, before any CUDA graph capture);
- `apply` returns None for what it does not serve (not prepared, M above max_m, a device or
  dtype it does not take, a problem the library refuses), so the caller keeps its own path.
"""
from typing import Optional

import torch

from . import _capi, _runtime, ops


def quantize_weight(w: torch.Tensor):
    """w [N,K] float -> (w_q int8 [N,K], scale f32 [N]): q = clamp(rne(w/s), -127, 127),
    s = max|w_row| / 127 (an all-zero row gets s = 1)."""
    w = w.detach().float()
    s = w.abs().amax(dim=1) / 127.0
    s = torch.where(s > 0, s, torch.ones_like(s))
    q = torch.clamp(torch.round(w / s[:, None]), -127, 127).to(torch.int8)
    return q.contiguous(), s.contiguous()


class W8A8Linear(torch.nn.Module):
    def __init__(self, weight_q, weight_scale, bias=None, out_dtype=torch.bfloat16):
        super().__init__()
        # Inference buffers: detached, so no autograd graph (torch.compile, a bias taken from an
        # nn.Linear's Parameter) ever tries to differentiate through the int8 op.
        self.register_buffer("weight_q", weight_q.detach().contiguous())
        self.register_buffer("weight_scale", weight_scale.detach().float().contiguous())
        self.register_buffer("bias", None if bias is None else bias.detach().float().contiguous())
        self.out_dtype = out_dtype
        self.max_m = 0         # rows prepared for; 0: apply() serves nothing yet
        self.unsupported = ""  # the library's reason when prepare refused the problem

    @classmethod
    def from_linear(cls, linear: torch.nn.Linear, out_dtype=None):
        w_q, s = quantize_weight(linear.weight)
        return cls(w_q, s, linear.bias, out_dtype or linear.weight.dtype)

    def problem_key(self):
        n, k = self.weight_q.shape
        return ops.problem_key(n, k, self.out_dtype, "nk", "token", "channel", self.bias is not None)

    def prepare(self, max_m: int) -> bool:
        """Loads or compiles every kernel for M <= max_m on the weight's device (outside capture).
        False, with the library's reason in self.unsupported, where it refuses the problem."""
        if self.weight_q.device.type != "cuda":
            self.unsupported, self.max_m = f"the weight is on {self.weight_q.device}, not a CUDA device", 0
            return False
        try:
            _runtime.prepare(self.problem_key(), max_m, self.weight_q.device.index)
        except _capi.Error as e:
            if e.status not in (_capi.UNSUPPORTED, _capi.INVALID_ARGUMENT):
                raise
            self.unsupported, self.max_m = str(e), 0
            return False
        self.max_m = max_m
        return True

    def apply(self, x: torch.Tensor) -> Optional[torch.Tensor]:
        """y = x . W^T (+ bias) through i8gemm, or None where it does not serve x."""
        k = self.weight_q.shape[1]
        m = x.numel() // k
        if (self.max_m == 0 or m > self.max_m or x.shape[-1] != k or x.device != self.weight_q.device
                or x.dtype not in (torch.bfloat16, torch.float16, torch.float32)):
            return None
        x2 = x.reshape(m, k).contiguous()
        x_q, x_s, _ = torch.ops.i8gemm.quantize(x2)
        y = torch.ops.i8gemm.gemm(x_q, self.weight_q, x_s, self.weight_scale, self.out_dtype, self.bias)
        return y.reshape(*x.shape[:-1], self.weight_q.shape[0])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.apply(x)
        if y is None:  # the caller's own path; here: the dequantized weight in float
            w = self.weight_q.to(x.dtype) * self.weight_scale.to(x.dtype)[:, None]
            b = None if self.bias is None else self.bias.to(x.dtype)
            y = torch.nn.functional.linear(x, w, b).to(self.out_dtype)
        return y
