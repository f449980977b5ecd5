// jitify=True: <stddef.h> is libcu++'s <cuda/std/cstddef>.
#pragma once
#include <cuda/std/cstddef>
#include "__jitkern_std.h"
