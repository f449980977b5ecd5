// jitify=True: <stdlib.h> is libcu++'s <cuda/std/cstdlib>, its names also in namespace std.
#pragma once
#if __has_include(<cuda/std/cstdlib>)
#include <cuda/std/cstdlib>
#else
#error "jitify=True: <stdlib.h> needs libcu++'s <cuda/std/cstdlib>, which the CCCL on the include path lacks (a newer CCCL has it: pip install -U 'cuda-toolkit[cccl]', and leave CUDA_HOME unset)"
#endif
#include "__jitkern_std.h"
