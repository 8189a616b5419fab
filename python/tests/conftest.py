import pytest
import torch

META = torch.device("meta")


def meta(*shape, dtype=torch.float32):
    return torch.empty(*shape, dtype=dtype, device=META)


@pytest.fixture
def gemm_args():
    """x_q [8,64], w_q [32,64] (nk), per-token x_scale [8,1], per-channel w_scale [32], on meta."""
    return (meta(8, 64, dtype=torch.int8), meta(32, 64, dtype=torch.int8), meta(8, 1), meta(32))
