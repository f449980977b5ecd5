// cupy/cuda_workaround.h: std:: names for NVRTC, from CCCL's libcu++.
//
// NVRTC has no C++ standard library. Compiled by NVRTC, this header includes libcu++'s
// <cuda/std/type_traits>, <limits>, <utility> and <tuple> and declares in namespace std
// the names CuPy's header of this name declares there:
//
//   <type_traits>  add_const add_cv add_lvalue_reference add_volatile alignment_of
//                  conditional enable_if false_type integral_constant is_array is_base_of
//                  is_convertible is_enum is_floating_point is_function is_integral
//                  is_lvalue_reference is_same is_signed is_pointer is_unsigned is_volatile
//                  make_signed make_unsigned remove_cv remove_reference remove_pointer
//                  result_of (where libcu++ still has it) true_type
//   <limits>       numeric_limits
//   <utility>      declval index_sequence integer_sequence make_index_sequence
//                  make_integer_sequence make_pair pair
//   <tuple>        get tuple make_tuple
//
// Other compilers have the standard library: there this header does nothing. libcu++'s
// headers are large (about 2 s of compile, once: the binary is cached). With jitify=True
// every std:: name libcu++ has is reachable already (docs/complex.md, "jitify=True").

#ifndef JITKERN_CUPY_CUDA_WORKAROUND_H
#define JITKERN_CUPY_CUDA_WORKAROUND_H

#ifdef __CUDACC_RTC__
#include <cuda/std/type_traits>
#include <cuda/std/limits>
#include <cuda/std/utility>
#include <cuda/std/tuple>
// result_of left the standard in C++20; libcu++ keeps it for C++17 in a header of its own
#if __cplusplus <= 201703L && defined(__has_include)
#if __has_include(<cuda/std/__type_traits/result_of.h>)
#include <cuda/std/__type_traits/result_of.h>
#define JITKERN_HAS_RESULT_OF 1
#endif
#endif

namespace std {
using ::cuda::std::add_const;
using ::cuda::std::add_cv;
using ::cuda::std::add_lvalue_reference;
using ::cuda::std::add_volatile;
using ::cuda::std::alignment_of;
using ::cuda::std::conditional;
using ::cuda::std::enable_if;
using ::cuda::std::false_type;
using ::cuda::std::integral_constant;
using ::cuda::std::is_array;
using ::cuda::std::is_base_of;
using ::cuda::std::is_convertible;
using ::cuda::std::is_enum;
using ::cuda::std::is_floating_point;
using ::cuda::std::is_function;
using ::cuda::std::is_integral;
using ::cuda::std::is_lvalue_reference;
using ::cuda::std::is_same;
using ::cuda::std::is_signed;
using ::cuda::std::is_pointer;
using ::cuda::std::is_unsigned;
using ::cuda::std::is_volatile;
using ::cuda::std::make_signed;
using ::cuda::std::make_unsigned;
using ::cuda::std::remove_cv;
using ::cuda::std::remove_reference;
using ::cuda::std::remove_pointer;
using ::cuda::std::true_type;
#ifdef JITKERN_HAS_RESULT_OF
using ::cuda::std::result_of;
#endif
using ::cuda::std::numeric_limits;
using ::cuda::std::declval;
using ::cuda::std::index_sequence;
using ::cuda::std::integer_sequence;
using ::cuda::std::make_index_sequence;
using ::cuda::std::make_integer_sequence;
using ::cuda::std::make_pair;
using ::cuda::std::pair;
using ::cuda::std::get;
using ::cuda::std::tuple;
using ::cuda::std::make_tuple;
}  // namespace std
#endif  // __CUDACC_RTC__

#endif  // JITKERN_CUPY_CUDA_WORKAROUND_H
