// jitify=True: <stddef.h> is libcu++'s <cuda/std/cstddef>, its names also in namespace std.
#pragma once
#if __has_include(<cuda/std/cstddef>)
#include <cuda/std/cstddef>
#else
#error "jitify=True: <stddef.h> needs libcu++'s <cuda/std/cstddef>, which the CCCL on the include path lacks (a newer CCCL has it: pip install -U 'cuda-toolkit[cccl]', and leave CUDA_HOME unset)"
#endif
#include "__jitkern_std.h"
