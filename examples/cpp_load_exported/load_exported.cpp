// Load a kernel that jitkern exported (export_kernel.py) with the CUDA driver API and
// launch it with the layout from the generated header: no Python, no NVRTC.
//
//   build_and_run.sh does: python export_kernel.py OUT; nvcc -I OUT load_exported.cpp -lcuda
#include <cuda.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "row_axpy.h"  // written by the export: symbol, parameter offsets, sizes, kinds

#define CHECK(call)                                                              \
  do {                                                                           \
    CUresult err_ = (call);                                                      \
    if (err_ != CUDA_SUCCESS) {                                                  \
      const char* msg_ = nullptr;                                                \
      cuGetErrorString(err_, &msg_);                                             \
      std::fprintf(stderr, "%s failed: %s (line %d)\n", #call, msg_, __LINE__);  \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

// A device array as the JIT sees it: pointer, shape, byte strides.
struct Array {
  CUdeviceptr ptr;
  int ndim;
  long long shape[2];
  long long strides[2];
};

int main(int argc, char** argv) {
  using K = jitkern_export::row_axpy;
  const char* fatbin_path = argc > 1 ? argv[1] : "row_axpy.fatbin";
  std::ifstream file(fatbin_path, std::ios::binary);
  if (!file) { std::fprintf(stderr, "cannot open %s\n", fatbin_path); return 1; }
  std::vector<char> image((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());

  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CUmodule module;
  CHECK(cuModuleLoadData(&module, image.data()));
  CUfunction fn;
  CHECK(cuModuleGetFunction(&fn, module, K::symbol));

  const int n = 1000;
  std::vector<float> x(n), m(3 * n), out(n, NAN);
  for (int i = 0; i < n; ++i) x[i] = 0.5f * i - 7.0f;
  for (int i = 0; i < 3 * n; ++i) m[i] = std::sin(0.1f * i);
  const float alpha = 2.5f;

  CUdeviceptr dx, dm, dout;
  CHECK(cuMemAlloc(&dx, n * sizeof(float)));
  CHECK(cuMemAlloc(&dm, 3 * n * sizeof(float)));
  CHECK(cuMemAlloc(&dout, n * sizeof(float)));
  CHECK(cuMemcpyHtoD(dx, x.data(), n * sizeof(float)));
  CHECK(cuMemcpyHtoD(dm, m.data(), 3 * n * sizeof(float)));
  CHECK(cuMemcpyHtoD(dout, out.data(), n * sizeof(float)));

  // The user's arguments, in the Python function's order: x, m (n x 3, C order), alpha, out.
  Array arrays[4] = {{dx, 1, {n, 0}, {4, 0}},
                     {dm, 2, {n, 3}, {12, 4}},
                     {0, 0, {0, 0}, {0, 0}},
                     {dout, 1, {n, 0}, {4, 0}}};

  // One buffer laid out as the manifest says; the driver copies it (CU_LAUNCH_PARAM_*).
  std::vector<unsigned char> params(K::param_bytes, 0);
  for (int i = 0; i < K::num_params; ++i) {
    unsigned char* slot = params.data() + K::param_offsets[i];
    switch (K::param_kinds[i]) {
      case jitkern_export::pointer: {
        CUdeviceptr p = arrays[i].ptr;  // the first parameters are the user's, in order
        std::memcpy(slot, &p, sizeof p);
        break;
      }
      case jitkern_export::value:
        std::memcpy(slot, &alpha, sizeof alpha);  // this kernel's only value parameter
        break;
      case jitkern_export::shape:
        std::memcpy(slot, &arrays[K::param_arg[i]].shape[K::param_axis[i]], 8);
        break;
      case jitkern_export::stride:
        std::memcpy(slot, &arrays[K::param_arg[i]].strides[K::param_axis[i]], 8);
        break;
      default:
        std::fprintf(stderr, "parameter %d: unknown kind\n", i);
        return 1;
    }
  }
  size_t size = params.size();
  void* config[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, params.data(), CU_LAUNCH_PARAM_BUFFER_SIZE,
                    &size, CU_LAUNCH_PARAM_END};
  const unsigned block = 128, grid = (n + block - 1) / block;
  CHECK(cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, nullptr, nullptr, config));
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(out.data(), dout, n * sizeof(float)));

  int bad = 0;
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const float want = alpha * x[i] + m[3 * i + 1];
    const double err = std::fabs(out[i] - want);
    worst = err > worst ? err : worst;
    if (!(err <= 1e-5 * (1 + std::fabs(want)))) ++bad;
  }
  std::printf("%s: %d parameters (%u bytes), %d elements, max abs error %.3g: %s\n", K::symbol,
              K::num_params, K::param_bytes, n, worst, bad ? "MISMATCH" : "OK");
  cuMemFree(dx);
  cuMemFree(dm);
  cuMemFree(dout);
  cuModuleUnload(module);
  cuDevicePrimaryCtxRelease(dev);
  return bad ? 1 : 0;
}
