#!/usr/bin/env bash
# Installs a build into a temporary prefix and builds a small C consumer against it, once with
# find_package(i8gemm) and once with pkg-config; both must load the library and agree with the
# header's version. Also checks the soname, that every function the header declares is
# exported, and that the installed CLI runs.
#   consumer_check.sh BUILD_DIR [C_FLAGS]   (C_FLAGS: the build's own, e.g. its sanitizers)
set -euo pipefail
build=$(cd "$1" && pwd)
cflags=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "consumer_check: FAIL: $*" >&2; exit 1; }
prefix="$tmp/prefix"

cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
for f in include/i8gemm/i8gemm.h lib/libi8gemm.so lib/libi8gemm.so.0 lib/cmake/i8gemm/i8gemmConfig.cmake \
         lib/cmake/i8gemm/i8gemmConfigVersion.cmake lib/cmake/i8gemm/i8gemmTargets.cmake lib/pkgconfig/i8gemm.pc \
         bin/i8gemm; do
  [[ -e "$prefix/$f" ]] || fail "$f is not installed"
done
soname=$(readelf -d "$prefix/lib/libi8gemm.so.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ "$soname" == libi8gemm.so.0 ]] || fail "soname is '$soname', expected libi8gemm.so.0"
"$prefix/bin/i8gemm" --version > "$tmp/version.txt" || fail "installed i8gemm --version"
grep -q '^i8gemm [0-9]*\.[0-9]*\.[0-9]* (commit ' "$tmp/version.txt" || fail "--version: $(head -1 "$tmp/version.txt")"

# Every function the header declares is exported by the library (exports.map keeps i8gemm_*).
declared=$(sed -E -n 's/^I8GEMM_API [^(]*[ *](i8gemm_[a-z0-9_]+)\(.*/\1/p' "$prefix/include/i8gemm/i8gemm.h")
[[ -n "$declared" ]] || fail "no I8GEMM_API function found in the installed header"
exported=$(nm -D --defined-only "$prefix/lib/libi8gemm.so.0")
for fn in $declared; do
  grep -qw "$fn" <<< "$exported" || fail "$fn is declared in i8gemm.h but libi8gemm.so.0 does not export it"
done

mkdir -p "$tmp/consumer"
cat > "$tmp/consumer/main.c" <<'C'
#include <i8gemm/i8gemm.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  printf("%s\n", i8gemm_version());
  return strcmp(i8gemm_version(), I8GEMM_VERSION_STRING) == 0 ? 0 : 1;
}
C
cat > "$tmp/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.22)
project(consumer C)
find_package(i8gemm 0 REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE i8gemm::i8gemm)
CM
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$cflags" \
  > "$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "configure the find_package consumer"; }
cmake --build "$tmp/consumer/build" >> "$tmp/consumer.log" 2>&1 || { cat "$tmp/consumer.log"; fail "build it"; }
want=$(sed -n 's/^#define I8GEMM_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/i8gemm/i8gemm.h")
got=$("$tmp/consumer/build/consumer") || fail "the find_package consumer did not run (or versions differ)"
[[ "$got" == "$want" ]] || fail "find_package consumer printed '$got', header says '$want'"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046,SC2086
cc $cflags "$tmp/consumer/main.c" $(pkg-config --cflags --libs i8gemm) -o "$tmp/consumer/pc" \
  || fail "build the pkg-config consumer"
got=$(LD_LIBRARY_PATH="$prefix/lib" "$tmp/consumer/pc") || fail "the pkg-config consumer did not run"
[[ "$got" == "$want" ]] || fail "pkg-config consumer printed '$got', header says '$want'"
echo "consumer_check: ok (i8gemm $want installed, soname $soname, find_package and pkg-config consumers run)"
