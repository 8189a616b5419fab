"""Fake (meta) implementations: output shapes and dtypes, and the argument checks they share
with the real ones, all without a GPU."""
import pytest
import torch

import i8gemm
from conftest import meta

OPS = torch.ops.i8gemm


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16, torch.float32, torch.int32])
def test_gemm_fake_gives_m_by_n_of_out_dtype(gemm_args, out_dtype):
    y = OPS.gemm(*gemm_args, out_dtype)
    assert (y.shape, y.dtype, y.device.type) == ((8, 32), out_dtype, "meta")


def test_gemm_defaults_to_bf16_and_takes_per_tensor_scales_and_kn_weights():
    x_q, w_kn = meta(8, 64, dtype=torch.int8), meta(64, 32, dtype=torch.int8)
    y = OPS.gemm(x_q, w_kn.t(), meta(1), meta(1))
    assert (y.shape, y.dtype) == ((8, 32), torch.bfloat16)


def test_gemm_out_fake_returns_none_and_keeps_out(gemm_args):
    out = meta(8, 32, dtype=torch.float16)
    assert OPS.gemm_out(out, *gemm_args, bias=meta(32)) is None
    assert out.shape == (8, 32)


def test_gemm_asymmetric_fake(gemm_args):
    y = OPS.gemm(*gemm_args, torch.bfloat16, None, meta(8, 1, dtype=torch.int32), meta(32, dtype=torch.int32))
    assert y.shape == (8, 32)


@pytest.mark.parametrize("per_token,asym,scale_shape,zp_shape",
                         [(True, False, (5, 1), (0,)), (False, False, (1,), (0,)),
                          (True, True, (5, 1), (5, 1)), (False, True, (1,), (1,))])
def test_quantize_fake_shapes(per_token, asym, scale_shape, zp_shape):
    x_q, s, zp = OPS.quantize(meta(5, 64, dtype=torch.bfloat16), per_token, asym)
    assert (x_q.shape, x_q.dtype) == ((5, 64), torch.int8)
    assert (tuple(s.shape), s.dtype) == (scale_shape, torch.float32)
    assert (tuple(zp.shape), zp.dtype) == (zp_shape, torch.int32)


def test_python_quantize_returns_two_or_three():
    assert len(i8gemm.quantize(meta(5, 64))) == 2
    assert len(i8gemm.quantize(meta(5, 64), asymmetric=True)) == 3


def test_vllm_drop_in_takes_vllm_layout():
    w = meta(32, 64, dtype=torch.int8)  # checkpoint [N,K]; vLLM passes b = w.t(), [K,N] column-major
    a, sa, sb = meta(8, 64, dtype=torch.int8), meta(8, 1), meta(32, 1)
    y = i8gemm.compat.cutlass_scaled_mm(a, w.t(), sa, sb, torch.bfloat16, meta(32, dtype=torch.bfloat16))
    assert (y.shape, y.dtype) == ((8, 32), torch.bfloat16)
    out = meta(8, 32, dtype=torch.float16)
    assert OPS.cutlass_scaled_mm(out, a, w.t(), sa, meta(1), None) is None
    y = i8gemm.compat.int8_scaled_mm(a, w.t(), sa, sb, torch.float16)
    assert y.dtype == torch.float16


def test_schemas_say_what_is_mutated():
    assert "Tensor(a0!) out" in str(OPS.gemm_out.default._schema)
    assert "Tensor(a0!) out" in str(OPS.cutlass_scaled_mm.default._schema)
    for op in (OPS.gemm, OPS.quantize):
        assert "!" not in str(op.default._schema)


BAD = [
    ("x_q int32", lambda a: (a[0].to(torch.int32),) + a[1:], TypeError, "x_q must be torch.int8"),
    ("w_q float", lambda a: (a[0], a[1].float()) + a[2:], TypeError, "w_q must be torch.int8"),
    ("K differs", lambda a: (a[0], meta(32, 48, dtype=torch.int8)) + a[2:], ValueError, "K differs"),
    ("3-D x_q", lambda a: (meta(2, 4, 64, dtype=torch.int8),) + a[1:], ValueError, "must be 2-D"),
    ("x_q strided", lambda a: (meta(8, 128, dtype=torch.int8)[:, :64],) + a[1:], ValueError,
     "x_q must be contiguous"),
    ("w_q strided", lambda a: (a[0], meta(32, 128, dtype=torch.int8)[:, ::2]) + a[2:], ValueError,
     "w_q must be \\[N,K\\] row-major"),
    ("x_scale count", lambda a: a[:2] + (meta(7),) + a[3:], ValueError, "x_scale must hold M=8"),
    ("w_scale count", lambda a: a[:3] + (meta(31),), ValueError, "w_scale must hold N=32"),
    ("x_scale f16", lambda a: a[:2] + (meta(8, dtype=torch.float16),) + a[3:], TypeError,
     "x_scale must be torch.float32"),
]


@pytest.mark.parametrize("name,mutate,exc,msg", BAD, ids=[b[0] for b in BAD])
def test_gemm_argument_errors_are_python_errors(gemm_args, name, mutate, exc, msg):
    with pytest.raises(exc, match=msg):
        OPS.gemm(*mutate(gemm_args))


def test_more_argument_errors(gemm_args):
    with pytest.raises(TypeError, match="bias must be torch.float32"):
        OPS.gemm(*gemm_args, torch.bfloat16, meta(32, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match="pass both or neither"):
        OPS.gemm(*gemm_args, torch.bfloat16, None, meta(8, dtype=torch.int32))
    with pytest.raises(TypeError, match="output must be"):
        OPS.gemm(*gemm_args, torch.int8)
    with pytest.raises(ValueError, match="out must be \\[M,N\\]=\\[8,32\\]"):
        OPS.gemm_out(meta(8, 31, dtype=torch.bfloat16), *gemm_args)
    with pytest.raises(ValueError, match="one device"):
        OPS.gemm(gemm_args[0], gemm_args[1], torch.ones(8), gemm_args[3])
    with pytest.raises(TypeError, match="x must be bfloat16, float16 or float32"):
        OPS.quantize(meta(4, 64, dtype=torch.int8))


def test_cpu_tensors_are_refused_before_the_library(gemm_args):
    cpu = [torch.zeros(t.shape, dtype=t.dtype) for t in gemm_args]
    with pytest.raises(ValueError, match="i8gemm.gemm: tensors must be on a CUDA device, got cpu"):
        OPS.gemm(*cpu)
    with pytest.raises(ValueError, match="must be on a CUDA device"):
        OPS.quantize(torch.zeros(4, 64))
