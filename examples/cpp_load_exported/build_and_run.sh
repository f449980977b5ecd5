#!/usr/bin/env bash
# Export a JIT kernel from Python, then build and run the C++ loader against it.
#   examples/cpp_load_exported/build_and_run.sh [OUT_DIR]
#   BUILD_ONLY=1 examples/cpp_load_exported/build_and_run.sh [OUT_DIR]   (no GPU needed)
# Needs jitkern (on PYTHONPATH), a C++ compiler and the CUDA driver API header (cuda.h, from a
# CUDA toolkit); linking needs libcuda (the toolkit's stub, or the NVIDIA driver's
# libcuda.so.1) and running needs a GPU with its driver. Without libcuda, BUILD_ONLY=1
# compiles the loader to an object file and says so.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$(mktemp -d)}"
build_only="${BUILD_ONLY:-0}"
cuda_home="${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}"

need() { echo "build_and_run.sh: $*" >&2; exit 1; }

cxx=()
if command -v nvcc >/dev/null 2>&1; then
  cxx=(nvcc)
elif [[ -e "$cuda_home/include/cuda.h" ]] && command -v g++ >/dev/null 2>&1; then
  cxx=(g++ -I"$cuda_home/include")
else
  need "needs a CUDA toolkit's nvcc, or g++ and cuda.h (looked in $cuda_home/include; set CUDA_HOME)"
fi
# Link against libcuda: the toolkit's stub (the driver's library is used at run time),
# else the driver's own libcuda.so.1.
libcuda=()
for stub in "$cuda_home/lib64/stubs/libcuda.so" "$cuda_home/targets/x86_64-linux/lib/stubs/libcuda.so" \
            "$cuda_home/targets/sbsa-linux/lib/stubs/libcuda.so"; do
  if [[ -e "$stub" ]]; then libcuda=(-L"$(dirname "$stub")" -lcuda); break; fi
done
if [[ ${#libcuda[@]} -eq 0 ]]; then
  found="$(ldconfig -p 2>/dev/null | awk '/libcuda.so.1 /{print $NF; exit}')"
  [[ -n "$found" ]] && libcuda=("$found")
fi
if [[ ${#libcuda[@]} -eq 0 && "$build_only" != "1" ]]; then
  need "running the loader needs a GPU and the NVIDIA driver (libcuda.so.1 was not found); BUILD_ONLY=1 builds it without one"
fi

mkdir -p "$out"
python3 "$here/export_kernel.py" "$out"
if [[ ${#libcuda[@]} -eq 0 ]]; then
  "${cxx[@]}" -std=c++17 -O2 -I"$out" -c "$here/load_exported.cpp" -o "$out/load_exported.o"
  echo "compiled $out/load_exported.o; not linked: no libcuda here (neither $cuda_home/lib64/stubs/libcuda.so nor the driver's libcuda.so.1)"
  exit 0
fi
"${cxx[@]}" -std=c++17 -O2 -I"$out" "$here/load_exported.cpp" -o "$out/load_exported" "${libcuda[@]}"
if [[ "$build_only" == "1" ]]; then
  echo "built $out/load_exported"
  exit 0
fi
"$out/load_exported" "$out/row_axpy.fatbin"
