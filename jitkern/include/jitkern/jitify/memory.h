// jitify=True: <memory.h> is <string.h>, as in the C libraries that have it.
#pragma once
#include "__jitkern_host_only.h"
#include <string.h>
