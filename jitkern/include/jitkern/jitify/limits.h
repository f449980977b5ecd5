// jitify=True: <limits.h> is libcu++'s <cuda/std/climits>.
#pragma once
#include <cuda/std/climits>
#include "__jitkern_std.h"
