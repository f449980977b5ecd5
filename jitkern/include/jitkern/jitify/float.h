// jitify=True: <float.h> is libcu++'s <cuda/std/cfloat>.
#pragma once
#include <cuda/std/cfloat>
#include "__jitkern_std.h"
