// jitify=True: <string.h> is libcu++'s <cuda/std/cstring>.
#pragma once
#include <cuda/std/cstring>
#include "__jitkern_std.h"
