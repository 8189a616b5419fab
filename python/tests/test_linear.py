"""The W8A8 linear layer example, on the CPU: weight quantization, and the fallback contract
(apply returns None for what it does not serve, so the caller keeps its own path)."""
import torch

import i8gemm


def test_weight_quantization_is_per_channel_and_within_half_a_step():
    torch.manual_seed(0)
    w = torch.randn(16, 64) * torch.linspace(0.1, 4, 16)[:, None]
    w[3] = 0
    q, s = i8gemm.quantize_weight(w)
    assert (q.dtype, q.shape, s.shape) == (torch.int8, (16, 64), (16,))
    assert q.abs().max() <= 127 and s[3] == 1 and (q[3] == 0).all()
    assert ((q.float() * s[:, None] - w).abs() <= s[:, None] / 2 + 1e-6).all()


def test_unprepared_layer_returns_none_and_forward_keeps_the_callers_path():
    torch.manual_seed(0)
    lin = torch.nn.Linear(64, 32)
    layer = i8gemm.W8A8Linear.from_linear(lin, torch.float32)
    x = torch.randn(3, 64)
    assert layer.apply(x) is None
    y = layer(x)
    w = layer.weight_q.float() * layer.weight_scale[:, None]
    assert torch.allclose(y, x @ w.T + lin.bias, atol=1e-5)


def test_prepare_refuses_a_cpu_weight_with_a_reason():
    layer = i8gemm.W8A8Linear.from_linear(torch.nn.Linear(64, 32))
    assert layer.prepare(16) is False
    assert "not a CUDA device" in layer.unsupported and layer.max_m == 0


def test_buffers_taken_from_a_linear_carry_no_autograd_history():
    # An nn.Linear's bias is a Parameter: a buffer made from it must not drag autograd (and so a
    # backward graph through the int8 op) into torch.compile (seen on the H200, 2026-12-01).
    layer = i8gemm.W8A8Linear.from_linear(torch.nn.Linear(64, 32))
    for name, b in layer.named_buffers():
        assert not b.requires_grad and b.grad_fn is None, name
