// jitify=True: <stdlib.h> is libcu++'s <cuda/std/cstdlib>.
#pragma once
#include <cuda/std/cstdlib>
#include "__jitkern_std.h"
