// jitkern: an iterator over a 1-D view with any byte stride (x[i].begin() of an N-d array,
// a row of an F-order array), for jit.thrust's algorithms (a random-access iterator).
#pragma once
#include <thrust/iterator/iterator_facade.h>

namespace jk {

template <class T>
class Strided : public thrust::iterator_facade<Strided<T>, T, thrust::any_system_tag,
                                               thrust::random_access_traversal_tag, T&,
                                               long long> {
 public:
  __host__ __device__ Strided() : p_(nullptr), step_(1) {}
  __host__ __device__ Strided(T* p, long long step_bytes)
      : p_(reinterpret_cast<char*>(p)), step_(step_bytes) {}

 private:
  friend class thrust::iterator_core_access;
  __host__ __device__ T& dereference() const { return *reinterpret_cast<T*>(p_); }
  __host__ __device__ bool equal(const Strided& other) const { return p_ == other.p_; }
  __host__ __device__ void increment() { p_ += step_; }
  __host__ __device__ void decrement() { p_ -= step_; }
  __host__ __device__ void advance(long long n) { p_ += n * step_; }
  __host__ __device__ long long distance_to(const Strided& other) const {
    // a zero stride (a broadcast view) has every element at one address
    return step_ == 0 ? 0 : (other.p_ - p_) / step_;
  }
  char* p_;
  long long step_;
};

}  // namespace jk
