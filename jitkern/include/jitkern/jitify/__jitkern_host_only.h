// jitify=True: declarations-only stand-ins for host-side standard headers (<vector>,
// <string>, <iostream>, ...), as Jitify gives them: code that includes one of them for
// host-side use (a header shared with host code) compiles; device code cannot use them
// (there is no definition: a call fails when the kernel is compiled).
#ifndef JITKERN_JITIFY_HOST_ONLY_H
#define JITKERN_JITIFY_HOST_ONLY_H
#define JITKERN_JITIFY_DECL __host__ __device__
#endif
