// jitify=True: <limits.h> is libcu++'s <cuda/std/climits>, its names also in namespace std.
#pragma once
#if __has_include(<cuda/std/climits>)
#include <cuda/std/climits>
#else
#error "jitify=True: <limits.h> needs libcu++'s <cuda/std/climits>, which the CCCL on the include path lacks (a newer CCCL has it: pip install -U 'cuda-toolkit[cccl]', and leave CUDA_HOME unset)"
#endif
#include "__jitkern_std.h"
