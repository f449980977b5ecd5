// jitify=True: <string.h> is libcu++'s <cuda/std/cstring>, its names also in namespace std.
#pragma once
#if __has_include(<cuda/std/cstring>)
#include <cuda/std/cstring>
#else
#error "jitify=True: <string.h> needs libcu++'s <cuda/std/cstring>, which the CCCL on the include path lacks (a newer CCCL has it: pip install -U 'cuda-toolkit[cccl]', and leave CUDA_HOME unset)"
#endif
#include "__jitkern_std.h"
