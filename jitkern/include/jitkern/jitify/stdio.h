// jitify=True: <stdio.h>. Device code has printf (NVRTC declares it); FILE, fflush and
// fprintf are declared only, for code shared with the host.
#pragma once
#include "__jitkern_host_only.h"
#include <stddef.h>
struct _jitkern_FILE;
typedef _jitkern_FILE FILE;
JITKERN_JITIFY_DECL int fflush(FILE* stream);
JITKERN_JITIFY_DECL int fprintf(FILE* stream, const char* format, ...);
