#!/usr/bin/env bash
# The Python package (pyproject.toml, python/i8gemm): installs this checkout into a fresh
# virtual environment beside torch from PyPI, then runs python/tests against the installed
# copy (the GPU tests skip where torch sees no CUDA device).
# The wheel takes the library and the CLI already built in $I8GEMM_BUILD_DIR (default build/,
# by scripts/build.sh) instead of compiling them again (I8GEMM_PREBUILT); I8GEMM_WHEEL_BUILD=1
# builds them from source through scikit-build-core, as a user's `pip install .` does.
set -euo pipefail
cd "$(dirname "$0")/.."
here="$PWD"
build="${I8GEMM_BUILD_DIR:-build}"
venv="build-py/venv"
start=$(date +%s)
rm -rf "$venv"
python3 -m venv "$venv"
py="$here/$venv/bin/python"
pip=("$py" -m pip install -q --disable-pip-version-check)
# torch: PyTorch's CPU-only wheels (~200 MB) where their index can be reached, else PyPI's
# (which pulls in the CUDA libraries, GBs). The tests need no GPU either way.
torch_spec="${TORCH_SPEC:-torch>=2.4}"
if ! "${pip[@]}" --timeout 20 --retries 1 --index-url https://download.pytorch.org/whl/cpu "$torch_spec" 2>/dev/null; then
  echo "test_python: PyTorch's CPU wheel index unreachable; torch from PyPI"
  "${pip[@]}" "$torch_spec"
fi
"${pip[@]}" numpy pytest
if [ "${I8GEMM_WHEEL_BUILD:-0}" = 1 ]; then
  "$py" -m pip install -q --disable-pip-version-check .
else
  "$py" -m pip install -q --disable-pip-version-check . -C build-dir=build-py/prebuilt \
    -C cmake.define.I8GEMM_PREBUILT="$here/$build"
fi
echo "test_python: venv with torch $("$py" -c 'import torch; print(torch.__version__)') and i8gemm" \
     "installed in $(( $(date +%s) - start )) s"
# From python/tests, so that `import i8gemm` finds the installed package, not python/i8gemm.
cd python/tests
I8GEMM_EXPECT_WHEEL=1 "$py" -m pytest -q -p no:cacheprovider .
echo "test_python: $(( $(date +%s) - start )) s in all"
