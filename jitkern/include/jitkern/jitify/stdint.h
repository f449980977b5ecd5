// jitify=True: <stdint.h> is libcu++'s <cuda/std/cstdint>, its names also in namespace std.
#pragma once
#if __has_include(<cuda/std/cstdint>)
#include <cuda/std/cstdint>
#else
#error "jitify=True: <stdint.h> needs libcu++'s <cuda/std/cstdint>, which the CCCL on the include path lacks (a newer CCCL has it: pip install -U 'cuda-toolkit[cccl]', and leave CUDA_HOME unset)"
#endif
#include "__jitkern_std.h"
