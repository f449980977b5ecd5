// jitify=True: the headers of this folder that are not libcu++'s (jitify.py STAND_INS).
// Jitify gives these too: <stdio.h>/<cstdio> (device printf; FILE, fflush, fprintf
// declared), <memory.h>, <time.h>, and declarations-only <vector>, <string>, <stdexcept>,
// <iostream>, <ostream>, <istream>, <sstream>, <mutex>. Code that includes one of them for
// host-side use (a header shared with host code) compiles; device code cannot use what is
// only declared (there is no definition: a call fails when the kernel is compiled).
#ifndef JITKERN_JITIFY_HOST_ONLY_H
#define JITKERN_JITIFY_HOST_ONLY_H
#define JITKERN_JITIFY_DECL __host__ __device__
#endif
