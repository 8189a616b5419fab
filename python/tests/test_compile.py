"""torch.compile(fullgraph=True) traces the ops through their fake impls, on a machine with no
GPU: on meta tensors, and on fake CUDA tensors under FakeTensorMode."""
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import i8gemm
from conftest import meta


def graph_of(fn, *args, **compile_kwargs):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    result = torch.compile(fn, backend=backend, fullgraph=True, **compile_kwargs)(*args)
    return result, graphs


def quantize_then_gemm(x, w_q, w_s, out):
    x_q, x_s, _ = torch.ops.i8gemm.quantize(x)
    y = torch.ops.i8gemm.gemm(x_q, w_q, x_s, w_s, torch.bfloat16)
    torch.ops.i8gemm.gemm_out(out, x_q, w_q, x_s, w_s)
    return torch.relu(y), out


def args(m=8):
    return (meta(m, 64, dtype=torch.bfloat16), meta(32, 64, dtype=torch.int8), meta(32),
            meta(m, 32, dtype=torch.float16))


def test_fullgraph_holds_the_three_ops_in_one_graph():
    (y, out), graphs = graph_of(quantize_then_gemm, *args())
    assert len(graphs) == 1
    code = graphs[0].code
    for op in ("torch.ops.i8gemm.quantize", "torch.ops.i8gemm.gemm(", "torch.ops.i8gemm.gemm_out"):
        assert op in code
    assert (y.shape, y.dtype, out.shape) == ((8, 32), torch.bfloat16, (8, 32))


def test_dynamic_m_traces_once_for_several_m():
    torch._dynamo.reset()
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    fn = torch.compile(quantize_then_gemm, backend=backend, fullgraph=True, dynamic=True)
    for m in (5, 9, 17):
        y, _ = fn(*args(m))
        assert y.shape == (m, 32)
    assert len(graphs) == 1


def test_aot_autograd_functionalizes_gemm_out():
    fn = torch.compile(quantize_then_gemm, backend="aot_eager", fullgraph=True)
    y, out = fn(*args())
    assert (y.shape, out.shape, out.dtype) == ((8, 32), (8, 32), torch.float16)


def test_fake_cuda_tensors_trace_without_a_gpu():
    with FakeTensorMode():
        x = torch.empty(8, 64, dtype=torch.bfloat16, device="cuda")
        w = torch.empty(32, 64, dtype=torch.int8, device="cuda")
        y, _ = quantize_then_gemm(x, w, torch.empty(32, device="cuda"),
                                  torch.empty(8, 32, dtype=torch.float16, device="cuda"))
    assert (y.device.type, y.shape) == ("cuda", (8, 32))


def test_two_layer_w8a8_model_compiles_fullgraph_on_meta():
    torch.manual_seed(0)
    l1 = i8gemm.W8A8Linear.from_linear(torch.nn.Linear(64, 128, dtype=torch.bfloat16))
    l2 = i8gemm.W8A8Linear.from_linear(torch.nn.Linear(128, 32, dtype=torch.bfloat16))
    model = torch.nn.Sequential(l1, torch.nn.ReLU(), l2).to("meta")
    for layer in (l1, l2):
        layer.max_m = 64  # as if prepared: the ops' fake impls need no GPU
    (y,), graphs = graph_of(lambda x: (model(x),), meta(4, 8, 64, dtype=torch.bfloat16))
    assert (y.shape, y.dtype) == ((4, 8, 32), torch.bfloat16)
    assert graphs[0].code.count("torch.ops.i8gemm.gemm(") == 2
