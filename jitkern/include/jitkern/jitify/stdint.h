// jitify=True: <stdint.h> is libcu++'s <cuda/std/cstdint>.
#pragma once
#include <cuda/std/cstdint>
#include "__jitkern_std.h"
