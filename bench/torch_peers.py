#!/usr/bin/env python3
"""Peers of i8gemm that live in Python: torch fp8 rowwise (_scaled_mm) and a Triton W8A8 kernel.

Operator: out[M,N] bf16 = (x[M,K] . w[N,K]^T) * xs[m] * ws[n]. Timed like i8gemm's own bench
(runtime/gpu/timing.cpp, runtime/tune/operands.cpp): random data, operand sets rotated so that
weights are not served from L2, 50 eager warm-up calls, one CUDA graph of max(20, sets) calls
(call i on set i % sets), 3 warm replays, then `--samples` replays each timed with CUDA events;
per-call time = replay / calls; median, p90, min in microseconds.

Every contender that cannot run (no torch, no triton, no CUDA, unsupported shape) becomes a row
with a `status` saying why; the program does not crash on those.

    python3 bench/torch_peers.py --shape tp4_qkv=2560x4096 --m 1,16,128,1024,4096 --json out.json
"""
import argparse
import contextlib
import json
import math
import sys
import threading
import time

ROTATION_BYTES = 256 << 20  # runtime/tune/operands.hpp kRotationBytes: > 4x the H200's 60 MB L2
MAX_SETS = 64               # runtime/tune/operands.hpp kMaxSets
CALLS_PER_GRAPH = 20        # runtime/gpu/timing.hpp TimingPlan::launches_per_sample (at least)
WARMUP_CALLS = 50           # TimingPlan::warmup, run eagerly before capture
WARM_REPLAYS = 3            # timing.cpp: max(3, warmup / launches_per_sample)
TUNE_SAMPLES = 5            # graph replays per Triton config while autotuning
VERIFY_ROWS = 64            # rows of the output checked against an exact reference
FP8_FAST_ACCUM = True       # how vLLM / SGLang call torch._scaled_mm for fp8 rowwise
FP8_RMS_TOLERANCE = 0.05    # allowed |error| / row RMS for fp8 with fast accumulation
CONTENDERS = ("torch_fp8_rowwise", "triton_w8a8")

try:
    import triton
    import triton.language as tl
    TRITON_ERROR = None
except Exception as exc:  # noqa: BLE001 - any import failure just disables the contender
    triton = tl = None
    TRITON_ERROR = f"triton not importable: {type(exc).__name__}: {exc}"

if triton is not None:
    @triton.jit
    def _w8a8_kernel(x_ptr, w_ptr, xs_ptr, ws_ptr, out_ptr, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
        # int8 x int8 -> int32 on the tensor cores; per-token x per-channel scales in the epilogue.
        pid = tl.program_id(0)
        num_pid_m = tl.cdiv(M, BLOCK_M)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        width = GROUP_M * num_pid_n  # GROUP_M swizzle: neighbouring CTAs share weight tiles in L2
        first_m = (pid // width) * GROUP_M
        group_size = min(num_pid_m - first_m, GROUP_M)
        pid_m = first_m + (pid % width) % group_size
        pid_n = (pid % width) // group_size
        rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        # Wrapped indices keep loads in bounds without masks; the store masks the extra rows.
        ram = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
        rbn = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
        a_ptrs = x_ptr + ram[:, None] * K + rk[None, :]
        b_ptrs = w_ptr + rbn[None, :] * K + rk[:, None]  # [BLOCK_K, BLOCK_N] view of w[N, K]
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
        for kb in range(0, tl.cdiv(K, BLOCK_K)):
            if EVEN_K:
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
            else:
                k_left = K - kb * BLOCK_K
                a = tl.load(a_ptrs, mask=rk[None, :] < k_left, other=0)
                b = tl.load(b_ptrs, mask=rk[:, None] < k_left, other=0)
            acc = tl.dot(a, b, acc, out_dtype=tl.int32)
            a_ptrs += BLOCK_K
            b_ptrs += BLOCK_K
        xs = tl.load(xs_ptr + rm, mask=rm < M, other=0.0)
        ws = tl.load(ws_ptr + rn, mask=rn < N, other=0.0)
        out = acc.to(tl.float32) * xs[:, None] * ws[None, :]
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        tl.store(out_ptr + rm[:, None] * N + rn[None, :], out.to(tl.bfloat16), mask=mask)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", action="append", required=True, metavar="NAME=NxK",
                    help="weight shape, repeatable; NAME= is optional")
    ap.add_argument("--m", default="1,16,128,1024,4096", help="comma list of M values")
    ap.add_argument("--json", required=True, metavar="OUT", help="where to write the results")
    ap.add_argument("--samples", type=int, default=50, help="timed graph replays per row")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--warmup-ms", type=float, default=0.0,
                    help="replay each graph for at least this many ms before sampling (as i8gemm_peers --warmup-ms)")
    args = ap.parse_args(argv)
    try:
        args.shapes = [parse_shape(s) for s in args.shape]
        args.ms = [int(v) for v in args.m.split(",") if v.strip()]
    except ValueError as exc:
        ap.error(str(exc))
    if not args.ms or min(args.ms) < 1 or args.samples < 1:
        ap.error("--m needs positive integers and --samples must be >= 1")
    if not 0.0 <= args.warmup_ms <= 10000.0:
        ap.error("--warmup-ms must be within [0, 10000]")
    return args


def parse_shape(text):
    name, _, dims = text.rpartition("=")
    try:
        n, k = (int(v) for v in dims.lower().split("x"))
    except ValueError:
        raise ValueError(f"'{text}' is not a shape: write NAME=NxK, e.g. tp4_qkv=2560x4096") from None
    if n < 1 or k < 1:
        raise ValueError(f"'{text}': N and K must be positive")
    return name or f"{n}x{k}", n, k


def make_row(contender, shape, m, status, note="", stats=None, power=(None, None), verified=None):
    name, n, k = shape
    stats = stats or {}
    return {"contender": contender, "shape": name, "n": n, "k": k, "m": m, "status": status,
            "graph_median_us": stats.get("median"), "graph_p90_us": stats.get("p90"),
            "graph_min_us": stats.get("min"), "sm_mhz": power[0], "power_w": power[1],
            "verified": verified, "note": note}


def one_line(exc):
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


class PowerSampler:
    """Polls SM clock and board power about every millisecond while a timed section runs."""

    def __init__(self, torch):
        self.handle, self.nvml, self.power_source = None, None, "none"
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = self._handle(torch, pynvml)
            self.read_watts = self._power_reader()
        except Exception:  # noqa: BLE001 - no NVML means null clock and power fields
            self.handle = None

    @staticmethod
    def _handle(torch, pynvml):
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        uuid = getattr(props, "uuid", None)
        if uuid is not None:
            text = str(uuid)
            try:
                return pynvml.nvmlDeviceGetHandleByUUID(text if text.startswith("GPU-") else "GPU-" + text)
            except Exception:  # noqa: BLE001 - fall back to the index (right unless devices are masked)
                pass
        return pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())

    def _power_reader(self):
        """Instantaneous power where the driver has it; else the 1 s average, which lags short sections."""
        nvml, field = self.nvml, getattr(self.nvml, "NVML_FI_DEV_POWER_INSTANT", None)
        if field is not None:
            try:
                v = nvml.nvmlDeviceGetFieldValues(self.handle, [field])[0]
                if v.nvmlReturn == 0:
                    self.power_source = "instant"
                    return lambda: nvml.nvmlDeviceGetFieldValues(self.handle, [field])[0].value.uiVal / 1000.0
            except Exception:  # noqa: BLE001
                pass
        self.power_source = "1 s average"
        return lambda: nvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0

    def __enter__(self):
        self.mhz, self.watts, self.stop = [], [], threading.Event()
        if self.handle is not None:
            self.thread = threading.Thread(target=self._poll, daemon=True)
            self.thread.start()
        return self

    def _poll(self):
        while not self.stop.is_set():
            try:
                self.mhz.append(self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM))
                self.watts.append(self.read_watts())
            except Exception:  # noqa: BLE001
                return
            time.sleep(0.001)

    def __exit__(self, *exc):
        self.stop.set()
        if self.handle is not None:
            self.thread.join()

    def result(self):
        mean = lambda v: sum(v) / len(v) if v else None  # noqa: E731
        return mean(self.mhz), mean(self.watts)


def summarize(us):
    us = sorted(us)
    p90 = us[min(len(us) - 1, math.ceil(0.9 * len(us)) - 1)]
    return {"median": us[len(us) // 2], "p90": p90, "min": us[0]}


def graph_time(torch, call, sets, samples, warmup_calls, sampler=None, warmup_ms=0.0):
    """Times call(i) under graph replay; `sampler` (a PowerSampler) runs only while sampling;
    `warmup_ms` (--warmup-ms, TimingPlan::warmup_ms): replays for at least that long first."""
    for i in range(warmup_calls):
        call(i % sets)
    torch.cuda.synchronize()
    calls = max(CALLS_PER_GRAPH, sets)  # one replay touches every set (TimingPlan::rotation)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for i in range(calls):
            call(i % sets)
    for _ in range(WARM_REPLAYS):
        graph.replay()
    torch.cuda.synchronize()
    t0 = time.monotonic()
    while (time.monotonic() - t0) * 1000.0 < warmup_ms:
        graph.replay()
        torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    us = []
    with sampler or contextlib.nullcontext():
        for _ in range(samples):
            start.record()
            graph.replay()
            stop.record()
            stop.synchronize()
            us.append(start.elapsed_time(stop) * 1000.0 / calls)
    del graph
    return summarize(us)


def make_sets(torch, gen, m, n, k):
    """Random int8 operands and scales, rotated: sets = clamp(256 MB / set bytes + 1, 1, 64)."""
    set_bytes = m * k + n * k + 2 * m * n + 4 * (m + n)
    count = max(1, min(MAX_SETS, ROTATION_BYTES // set_bytes + 1))
    sets = []
    for _ in range(count):
        sets.append({
            "x": torch.randint(-127, 128, (m, k), dtype=torch.int8, device="cuda", generator=gen),
            "w": torch.randint(-127, 128, (n, k), dtype=torch.int8, device="cuda", generator=gen),
            "xs": (torch.rand(m, device="cuda", generator=gen) * 1.5 + 0.5) / 127,
            "ws": (torch.rand(n, device="cuda", generator=gen) * 1.5 + 0.5) / 127,
            "out": torch.empty(m, n, dtype=torch.bfloat16, device="cuda"),
        })
    return sets


def sample_rows(torch, m):
    rows = torch.linspace(0, m - 1, steps=min(m, VERIFY_ROWS), device="cuda").round().long()
    return torch.unique(rows)


def int_accumulate(torch, x, w, rows):
    """Exact int32 dot products x[rows] . w^T as float64, and how they were computed."""
    m, k = x.shape
    if m > 16 and k % 8 == 0 and w.shape[0] % 8 == 0:
        try:
            return torch._int_mm(x, w.t())[rows].double(), "torch._int_mm"
        except Exception:  # noqa: BLE001 - fall back to the float64 reference
            pass
    return x[rows].double() @ w.double().t(), "float64"  # exact: |sum| < 2^53


def close_enough(torch, got, want, rel, rms_frac):
    """|got - want| <= rel * |want| + rms_frac * rms(want row): bf16 rounding plus accumulation error."""
    rms = want.pow(2).mean(dim=1, keepdim=True).sqrt()
    return bool(((got - want).abs() <= rel * want.abs() + rms_frac * rms + 1e-6).all())


def run_fp8(torch, gen, shape, m, samples, warmup_ms):
    _, n, k = shape
    if k % 16 or n % 16:
        return make_row("torch_fp8_rowwise", shape, m, "unsupported: _scaled_mm needs K and N multiples of 16")
    sets = []
    for s in make_sets(torch, gen, m, n, k):
        sets.append({"x": s["x"].to(torch.float8_e4m3fn), "w": s["w"].to(torch.float8_e4m3fn),
                     "sa": s["xs"].view(m, 1).contiguous(), "sb": s["ws"].view(1, n).contiguous(),
                     "out": s["out"]})
    use_out = [True]

    def call(i):
        s = sets[i]
        kw = dict(scale_a=s["sa"], scale_b=s["sb"], out_dtype=torch.bfloat16, use_fast_accum=FP8_FAST_ACCUM)
        if use_out[0]:
            try:
                return torch._scaled_mm(s["x"], s["w"].t(), out=s["out"], **kw)
            except TypeError:
                use_out[0] = False  # an older signature without out=: results land in fresh tensors
        s["out"] = torch._scaled_mm(s["x"], s["w"].t(), **kw)
        return s["out"]

    try:
        got = call(0)
        torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - unsupported here: say why
        return make_row("torch_fp8_rowwise", shape, m, f"unsupported: {one_line(exc)}")
    s, rows = sets[0], sample_rows(torch, m)
    want = (s["x"][rows].float().double() @ s["w"].float().double().t()) * s["sa"][rows].double() * s["sb"].double()
    # Fast accumulation drifts by up to ~1.5% of the row RMS on K=8192 (measured on an H200);
    # a wrong layout or scale is off by ~100%.
    verified = close_enough(torch, got[rows].double(), want, 2.0 ** -7, FP8_RMS_TOLERANCE)
    sampler = PowerSampler(torch)
    stats = graph_time(torch, call, len(sets), samples, WARMUP_CALLS, sampler, warmup_ms)
    note = (f"use_fast_accum={FP8_FAST_ACCUM}; operands are the int8 data cast to e4m3; sets={len(sets)}; "
            f"verified against float64 on the e4m3 operands ({len(rows)} rows); power: {sampler.power_source}")
    return make_row("torch_fp8_rowwise", shape, m, "ok", note, stats, sampler.result(), verified)


def triton_configs(m):
    """Candidate tiles by size class of M; pruned by shared memory (stages x tiles)."""
    # About a dozen per class: the tiles vLLM's and SGLang's Triton W8A8 tables use around them.
    if m <= 64:
        bms, bns, bks, stages = [max(16, min(64, 1 << (m - 1).bit_length()))], (64, 128, 256), (128, 256), (4, 5)
    elif m <= 256:
        bms, bns, bks, stages = (64, 128), (128, 256), (128, 256), (3, 4)
    else:
        bms, bns, bks, stages = (128, 256), (128, 256), (64, 128), (3, 4)
    for bm in bms:
        for bn in bns:
            for bk in bks:
                for st in stages:
                    if st * (bm + bn) * bk > 200 * 1024 or bm * bn > 256 * 128:
                        continue
                    warps = 8 if bm * bn >= 128 * 128 else 4
                    yield {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8,
                           "num_warps": warps, "num_stages": st}


def config_name(c):
    return (f"BM{c['BLOCK_M']}_BN{c['BLOCK_N']}_BK{c['BLOCK_K']}_G{c['GROUP_M']}"
            f"_w{c['num_warps']}_s{c['num_stages']}")


def run_triton(torch, gen, shape, m, samples, warmup_ms):
    if triton is None:
        return make_row("triton_w8a8", shape, m, TRITON_ERROR)
    _, n, k = shape
    sets = make_sets(torch, gen, m, n, k)

    def launcher(cfg):
        grid = (triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"]),)
        even_k = k % cfg["BLOCK_K"] == 0

        def call(i):
            s = sets[i]
            _w8a8_kernel[grid](s["x"], s["w"], s["xs"], s["ws"], s["out"], m, n, k, EVEN_K=even_k, **cfg)
        return call

    # Autotune under the same graph replay and rotation as the timing, before it; failures count as inf.
    best, best_us, tried, last_error = None, math.inf, 0, None
    for cfg in triton_configs(m):
        tried += 1
        try:
            us = graph_time(torch, launcher(cfg), len(sets), TUNE_SAMPLES, 2)["median"]
        except Exception as exc:  # noqa: BLE001 - out of resources, compile errors
            last_error = one_line(exc)
            continue
        if us < best_us:
            best, best_us = cfg, us
    if best is None:
        return make_row("triton_w8a8", shape, m, f"no config ran ({tried} tried): {last_error}")
    call = launcher(best)
    call(0)
    torch.cuda.synchronize()
    s, rows = sets[0], sample_rows(torch, m)
    acc, how = int_accumulate(torch, s["x"], s["w"], rows)
    want = acc * s["xs"][rows].double()[:, None] * s["ws"].double()[None, :]
    verified = close_enough(torch, s["out"][rows].double(), want, 2.0 ** -7, 0.0)
    sampler = PowerSampler(torch)
    stats = graph_time(torch, call, len(sets), samples, WARMUP_CALLS, sampler, warmup_ms)
    note = (f"{config_name(best)}; autotuned over {tried} configs under graph replay; sets={len(sets)}; "
            f"verified against {how} ({len(rows)} rows); power: {sampler.power_source}")
    return make_row("triton_w8a8", shape, m, "ok", note, stats, sampler.result(), verified)


def environment():
    """(torch or None, reason it cannot run, header fields)."""
    header = {"device": None, "tool": "torch_peers", "torch": None,
              "triton": getattr(triton, "__version__", None), "sm_count": None}
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        return None, f"torch not importable: {one_line(exc)}", header
    header["torch"] = torch.__version__
    if not torch.cuda.is_available():
        return None, "no CUDA device visible to torch", header
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    header["device"], header["sm_count"] = props.name, props.multi_processor_count
    return torch, None, header


def main(argv):
    args = parse_args(argv)
    torch, reason, result = environment()
    result["rows"] = rows = []
    runners = {"torch_fp8_rowwise": run_fp8, "triton_w8a8": run_triton}
    gen = None
    if torch is not None:
        gen = torch.Generator(device="cuda")
        gen.manual_seed(args.seed)
    for shape in args.shapes:
        for m in args.ms:
            for contender in CONTENDERS:
                if torch is None:
                    rows.append(make_row(contender, shape, m, reason))
                    continue
                print(f"torch_peers: {contender} {shape[0]} ({shape[1]}x{shape[2]}) M={m}", file=sys.stderr)
                try:
                    rows.append(runners[contender](torch, gen, shape, m, args.samples, args.warmup_ms))
                except Exception as exc:  # noqa: BLE001 - one failing row must not lose the others
                    rows.append(make_row(contender, shape, m, f"error: {one_line(exc)}"))
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                r = rows[-1]
                print(f"  {r['status']}  median {r['graph_median_us']} us  verified {r['verified']}", file=sys.stderr)
            with open(args.json, "w") as f:  # rewritten as rows come in: a crash keeps what ran
                json.dump(result, f, indent=1)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    if reason:
        print(f"torch_peers: {reason}; wrote status rows to {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
