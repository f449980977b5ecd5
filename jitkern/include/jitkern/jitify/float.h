// jitify=True: <float.h> is libcu++'s <cuda/std/cfloat>, its names also in namespace std.
#pragma once
#if __has_include(<cuda/std/cfloat>)
#include <cuda/std/cfloat>
#else
#error "jitify=True: <float.h> needs libcu++'s <cuda/std/cfloat>, which the CCCL on the include path lacks (a newer CCCL has it: pip install -U 'cuda-toolkit[cccl]', and leave CUDA_HOME unset)"
#endif
#include "__jitkern_cfloat.h"
#include "__jitkern_std.h"
