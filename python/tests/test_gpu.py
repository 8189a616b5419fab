"""On a CUDA GPU: the ops against the C path and a float64 / fp32-emulated torch reference, CUDA
graph capture and replay, torch.compile, no synchronization, and the vLLM drop-in. Skipped
where torch sees no CUDA device."""
import ctypes

import pytest
import torch

import i8gemm
from i8gemm import _capi as C

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
N, K = 512, 1024
DEV = "cuda"


def operands(m, n=N, k=K, seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    x_q = torch.randint(-127, 128, (m, k), dtype=torch.int8, generator=g)
    w_q = torch.randint(-127, 128, (n, k), dtype=torch.int8, generator=g)
    x_s = torch.rand(m, 1, generator=g) * 0.02 + 1e-3
    w_s = torch.rand(n, generator=g) * 0.02 + 1e-3
    return [t.to(DEV) for t in (x_q, w_q, x_s, w_s)]


def reference(x_q, w_q, x_s, w_s, out_dtype, bias=None):
    """docs/quantization.md step by step: exact acc, then each fp32 op rounded on its own."""
    acc = x_q.double() @ w_q.double().T  # exact: |acc| < 2^53
    if out_dtype == torch.int32:
        return acc.to(torch.int32)
    y = (acc.float() * x_s.reshape(-1, 1).float()) * w_s.reshape(1, -1).float()
    return (y if bias is None else y + bias.float()).to(out_dtype)


def reference64(x_q, w_q, x_s, w_s):
    return (x_q.double() @ w_q.double().T) * x_s.reshape(-1, 1).double() * w_s.reshape(1, -1).double()


@pytest.mark.parametrize("m", [1, 16, 65])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16, torch.float32, torch.int32])
def test_gemm_equals_the_fp32_reference_bit_for_bit(m, out_dtype):
    x_q, w_q, x_s, w_s = operands(m)
    y = torch.ops.i8gemm.gemm(x_q, w_q, x_s, w_s, out_dtype)
    assert torch.equal(y, reference(x_q, w_q, x_s, w_s, out_dtype))
    if out_dtype != torch.int32:
        tol = {torch.bfloat16: 2 ** -8, torch.float16: 2 ** -11, torch.float32: 2 ** -22}[out_dtype]
        torch.testing.assert_close(y.double(), reference64(x_q, w_q, x_s, w_s), rtol=tol, atol=1e-6)


def test_gemm_out_equals_the_c_path():
    m = 33
    x_q, w_q, x_s, w_s = operands(m)
    out = torch.empty(m, N, dtype=torch.bfloat16, device=DEV)
    torch.ops.i8gemm.gemm_out(out, x_q, w_q, x_s, w_s)
    key = i8gemm.ops.problem_key(N, K)
    d = i8gemm._runtime.device_state(x_q.device.index)
    out_c = torch.empty_like(out)
    args = C.Args(m, x_q.data_ptr(), w_q.data_ptr(), x_s.data_ptr(), w_s.data_ptr(), None, None, None,
                  out_c.data_ptr())
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    C.check(C.lib().i8gemm_run(d.handle, ctypes.byref(C.Problem(*key[:6], 0, 0)), ctypes.byref(args), stream))
    torch.cuda.synchronize()
    assert torch.equal(out, out_c)


def test_kn_layout_bias_and_per_tensor_scales():
    x_q, w_q, x_s, w_s = operands(20)
    w_kn = w_q.t().contiguous()
    bias = torch.randn(N, device=DEV)
    xs1, ws1 = x_s[:1, 0].contiguous(), w_s[:1].contiguous()
    y = torch.ops.i8gemm.gemm(x_q, w_kn.t(), xs1, ws1, torch.float32, bias)
    assert torch.equal(y, reference(x_q, w_q, xs1.expand(20), ws1.expand(N), torch.float32, bias))


def test_quantize_and_asymmetric_gemm_match_the_reference():
    torch.manual_seed(0)
    x = torch.randn(24, K, device=DEV, dtype=torch.bfloat16) + 0.5
    x_q, s = i8gemm.quantize(x)
    s_ref = x.float().abs().amax(dim=1, keepdim=True) / 127
    assert torch.equal(s, s_ref)
    assert torch.equal(x_q, torch.clamp(torch.round(x.float() / s_ref), -127, 127).to(torch.int8))
    xa_q, xa_s, zp = i8gemm.quantize(x, asymmetric=True)
    _, w_q, _, w_s = operands(24)
    y = torch.ops.i8gemm.gemm(xa_q, w_q, xa_s, w_s, torch.float32, None, zp, i8gemm.weight_colsum(w_q))
    acc = (xa_q.double() - zp.double()) @ w_q.double().T
    assert torch.equal(y, (acc.float() * xa_s) * w_s[None, :])


def test_cuda_graph_replays_with_new_contents():
    m = 16
    i8gemm.prepare(N, K, 64)
    x = torch.randn(m, K, device=DEV, dtype=torch.bfloat16)
    _, w_q, _, w_s = operands(m)
    out = torch.empty(m, N, dtype=torch.bfloat16, device=DEV)

    def step():
        x_q, x_s = i8gemm.quantize(x)
        torch.ops.i8gemm.gemm_out(out, x_q, w_q, x_s, w_s)
        return x_q, x_s

    step()  # warm-up outside capture, as torch recommends
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        xq_static, xs_static = step()
    for seed in (1, 2):
        torch.manual_seed(seed)
        x.copy_(torch.randn(m, K, device=DEV, dtype=torch.bfloat16))
        g.replay()
        torch.cuda.synchronize()
        x_q, x_s = i8gemm.quantize(x)
        assert torch.equal(xq_static, x_q)
        assert torch.equal(out, reference(x_q, w_q, x_s, w_s, torch.bfloat16))


def test_an_unprepared_problem_inside_capture_is_refused_with_the_library_message():
    x_q, w_q, x_s, w_s = operands(8, n=384, k=768)
    out = torch.empty(8, 384, dtype=torch.float16, device=DEV)
    g = torch.cuda.CUDAGraph()
    with pytest.raises(i8gemm.Error, match="not prepared.*capturing") as e:
        with torch.cuda.graph(g):
            torch.ops.i8gemm.gemm_out(out, x_q, w_q, x_s, w_s)
    assert e.value.status == C.NOT_PREPARED


def test_no_synchronization_inside_the_ops():
    x = torch.randn(16, K, device=DEV, dtype=torch.bfloat16)
    _, w_q, _, w_s = operands(16)
    out = torch.empty(16, N, dtype=torch.bfloat16, device=DEV)
    x_q, x_s = i8gemm.quantize(x)
    torch.ops.i8gemm.gemm_out(out, x_q, w_q, x_s, w_s)  # prepares (outside the check)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            x_q, x_s = i8gemm.quantize(x)
            torch.ops.i8gemm.gemm_out(out, x_q, w_q, x_s, w_s)
            torch.ops.i8gemm.gemm(x_q, w_q, x_s, w_s, torch.float16)
    finally:
        torch.cuda.set_sync_debug_mode("default")


def two_layer_model():
    torch.manual_seed(0)
    l1 = i8gemm.W8A8Linear.from_linear(torch.nn.Linear(K, N, device=DEV, dtype=torch.bfloat16))
    l2 = i8gemm.W8A8Linear.from_linear(torch.nn.Linear(N, 256, device=DEV, dtype=torch.bfloat16))
    for layer in (l1, l2):
        assert layer.prepare(128), layer.unsupported
    return torch.nn.Sequential(l1, torch.nn.ReLU(), l2)


@pytest.mark.parametrize("mode", [None, "reduce-overhead"])
def test_compiled_two_layer_model_matches_eager(mode):
    model = two_layer_model()
    x = torch.randn(4, 8, K, device=DEV, dtype=torch.bfloat16)
    eager = model(x)
    compiled = torch.compile(model, fullgraph=True, mode=mode)
    for _ in range(3):  # reduce-overhead: warm-up, record, replay
        assert torch.equal(compiled(x), eager)
    assert model[0].apply(x) is not None and model[0].apply(torch.randn(200, K, device=DEV)) is None


def test_vllm_drop_in_matches_the_reference_with_vllms_layout():
    m = 40
    x_q, w_q, x_s, w_s = operands(m)
    b = w_q.t()  # vLLM: [K,N], stride (1,K)
    assert b.stride() == (1, K)
    bias = torch.randn(N, device=DEV, dtype=torch.bfloat16)
    y = i8gemm.compat.cutlass_scaled_mm(x_q, b, x_s, w_s.reshape(N, 1), torch.bfloat16, bias)
    assert torch.equal(y, reference(x_q, w_q, x_s, w_s, torch.bfloat16, bias.float()))
    torch.testing.assert_close(y.double(), reference64(x_q, w_q, x_s, w_s) + bias.double(), rtol=2 ** -7, atol=1e-2)
    out = torch.empty_like(y)
    torch.ops.i8gemm.cutlass_scaled_mm(out, x_q, b, x_s, w_s.reshape(N, 1), bias)
    assert torch.equal(out, y)


def test_opcheck_passes():
    x_q, w_q, x_s, w_s = operands(16)
    torch.library.opcheck(torch.ops.i8gemm.gemm.default, (x_q, w_q, x_s, w_s, torch.bfloat16))
    torch.library.opcheck(torch.ops.i8gemm.quantize.default, (torch.randn(16, K, device=DEV),))


def test_chosen_names_the_kernel():
    i8gemm.prepare(N, K, 64)
    c = i8gemm.chosen(N, K, 16)
    assert c["kernel"] and c["bucket_max_m"] >= 16


def test_readme_example_replays_with_new_input():
    w_q, w_s = i8gemm.quantize_weight(torch.randn(2560, 4096, device="cuda"))
    i8gemm.prepare(2560, 4096, max_m=256)

    def mm(x):
        x_q, x_s = i8gemm.quantize(x)
        return torch.ops.i8gemm.gemm(x_q, w_q, x_s, w_s, torch.bfloat16)

    f = torch.compile(mm, fullgraph=True)
    x = torch.randn(16, 4096, dtype=torch.bfloat16, device="cuda")
    g = torch.cuda.CUDAGraph()
    f(x)
    with torch.cuda.graph(g):
        y = f(x)
    x.copy_(torch.randn_like(x))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, mm(x))
