// jitify=True: <math.h> is libcu++'s <cuda/std/cmath>.
#pragma once
#include <cuda/std/cmath>
#include "__jitkern_std.h"
