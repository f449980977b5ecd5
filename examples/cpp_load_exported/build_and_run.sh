#!/usr/bin/env bash
# Export a JIT kernel from Python, then build and run the C++ loader against it.
#   examples/cpp_load_exported/build_and_run.sh [OUT_DIR]
# Needs jitkern (on PYTHONPATH), a C++ compiler and the CUDA driver API headers (cuda.h).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
python3 "$here/export_kernel.py" "$out"
cuda_home="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"
cxx=(g++ -I"$cuda_home/include")
command -v nvcc >/dev/null 2>&1 && cxx=(nvcc)
# Link against libcuda: the toolkit's stub (the driver's library is used at run time),
# else the driver's own libcuda.so.1.
libcuda=(-L"$cuda_home/lib64/stubs" -lcuda)
if [[ ! -e "$cuda_home/lib64/stubs/libcuda.so" ]] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda.so '; then
  found="$(ldconfig -p 2>/dev/null | awk '/libcuda.so.1 /{print $NF; exit}')"
  [[ -n "$found" ]] && libcuda=("$found")
fi
"${cxx[@]}" -std=c++17 -O2 -I"$out" "$here/load_exported.cpp" -o "$out/load_exported" "${libcuda[@]}"
if [[ "${BUILD_ONLY:-0}" == "1" ]]; then
  echo "built $out/load_exported"
  exit 0
fi
"$out/load_exported" "$out/row_axpy.fatbin"
