// jitify=True: <time.h> is libcu++'s <cuda/std/ctime>, its types also global (NVRTC
// declares the global clock() itself).
#pragma once
#include "__jitkern_host_only.h"
#include <ctime>
using ::cuda::std::clock_t;
using ::cuda::std::time_t;
