#!/usr/bin/env bash
# Installs what i8gemm builds against, from Debian packages and PyPI. Idempotent:
# packages already present are not fetched again.
set -euo pipefail

# libamdhip64-dev, libhiprtc-builtins5, libamd-comgr-dev: hipRTC + comgr (ROCm 5.2) for the
# AMD backend (compiled and audited here, never run); llvm-15-dev: the LLVM comgr 5.2 is built
# on (libLLVM-15), whose C++ API reads the AMD kernels' IR in the hipRTC worker;
# llvm-14: llvm-objdump-14 / llvm-readelf-14, the tests' independent reading of code objects;
# clang-14 + libclang-rt-14-dev: libFuzzer and the sanitizer runtimes (scripts/fuzz.sh).
debs=(cmake g++ make pkg-config libsqlite3-dev libfmt-dev libcli11-dev libgtest-dev
      nlohmann-json3-dev libssl-dev libamdhip64-dev libhiprtc-builtins5 libamd-comgr-dev
      llvm-15-dev llvm-14 clang-14 libclang-rt-14-dev)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] || [ ! -e /usr/local/cuda/include/nvrtc.h ]; then
  echo "setup: the CUDA Toolkit (with NVRTC) is expected at /usr/local/cuda" >&2
  exit 1
fi

# nvdisasm turns CUBINs into SASS for `i8gemm inspect`. The toolkit on CPU machines ships
# without it; PyPI's nvidia-cuda-nvdisasm carries the binary. A missing nvdisasm is not an
# error: reports then say "SASS unavailable".
here="$(cd "$(dirname "$0")/.." && pwd)"
tooldir="$here/.deps/nvdisasm"
if [ ! -x "$tooldir/nvidia/cu13/bin/nvdisasm" ] && ! command -v nvdisasm >/dev/null 2>&1 \
   && [ ! -x /usr/local/cuda/bin/nvdisasm ]; then
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$tooldir" \
    nvidia-cuda-nvdisasm || echo "setup: nvdisasm could not be installed; SASS will be unavailable" >&2
fi

# CUTLASS headers for the benchmark's CUTLASS peer (bench/cutlass; nothing in i8gemm links it).
# The nvidia-cutlass wheel on PyPI ships CUTLASS's include/ and tools/util/include/; only those
# two trees are unpacked, into .deps/cutlass. A failed fetch is not an error: the benchmark's
# CUTLASS column then says why it is empty.
cutlass_ver=4.2.0.0
cutlass_dir="$here/.deps/cutlass"
if [ ! -f "$cutlass_dir/include/cutlass/gemm/collective/collective_builder.hpp" ]; then
  dl="$(mktemp -d)"
  if python3 -m pip download -q --disable-pip-version-check --no-deps \
       "nvidia-cutlass==$cutlass_ver" -d "$dl" \
     && python3 - "$dl" "$cutlass_dir" <<'PY'
import glob, os, shutil, sys, zipfile
dl, dest = sys.argv[1], sys.argv[2]
wheels = glob.glob(os.path.join(dl, "nvidia_cutlass-*.whl"))
if not wheels:
    sys.exit("no nvidia_cutlass wheel downloaded")
trees = {"cutlass_library/source/include/": "include/",
         "cutlass_library/source/tools/util/include/": "tools/util/include/"}
tmp = dest + ".partial"
shutil.rmtree(tmp, ignore_errors=True)
with zipfile.ZipFile(wheels[0]) as z:
    for name in z.namelist():
        for src, dst in trees.items():
            if name.startswith(src) and not name.endswith("/"):
                out = os.path.join(tmp, dst, name[len(src):])
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with z.open(name) as fi, open(out, "wb") as fo:
                    shutil.copyfileobj(fi, fo)
shutil.rmtree(dest, ignore_errors=True)
os.rename(tmp, dest)
PY
  then
    echo "setup: CUTLASS $cutlass_ver headers in $cutlass_dir"
  else
    echo "setup: CUTLASS headers could not be fetched; the benchmark's CUTLASS peer will be skipped" >&2
  fi
  rm -rf "$dl"
fi
