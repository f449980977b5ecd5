// jitify=True: <assert.h> is libcu++'s <cuda/std/cassert>.
#pragma once
#include <cuda/std/cassert>
#include "__jitkern_std.h"
