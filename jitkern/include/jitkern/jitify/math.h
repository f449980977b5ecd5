// jitify=True: <math.h> is libcu++'s <cuda/std/cmath>, its names also in namespace std.
#pragma once
#if __has_include(<cuda/std/cmath>)
#include <cuda/std/cmath>
#else
#error "jitify=True: <math.h> needs libcu++'s <cuda/std/cmath>, which the CCCL on the include path lacks (a newer CCCL has it: pip install -U 'cuda-toolkit[cccl]', and leave CUDA_HOME unset)"
#endif
#include "__jitkern_std.h"
