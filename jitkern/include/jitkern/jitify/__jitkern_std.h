// jitify=True: the names of libcu++'s cuda::std, reachable as std::.
//
// Included by every standard-header shim in this folder. A using-directive, not
// copies: std::is_same, std::numeric_limits, std::tuple... are cuda::std's. Code
// cannot specialise std templates through it (write `namespace cuda::std {...}`).
#ifndef JITKERN_JITIFY_STD_ALIAS_H
#define JITKERN_JITIFY_STD_ALIAS_H
namespace cuda {
namespace std {}
}  // namespace cuda
namespace std {
using namespace ::cuda::std;
}  // namespace std
#endif
