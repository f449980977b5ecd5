// jitify=True: <assert.h> is libcu++'s <cuda/std/cassert>, its names also in namespace std.
#pragma once
#if __has_include(<cuda/std/cassert>)
#include <cuda/std/cassert>
#else
#error "jitify=True: <assert.h> needs libcu++'s <cuda/std/cassert>, which the CCCL on the include path lacks (a newer CCCL has it: pip install -U 'cuda-toolkit[cccl]', and leave CUDA_HOME unset)"
#endif
#include "__jitkern_std.h"
