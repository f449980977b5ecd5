// cupy/carray.cuh: the names CuPy's carray.cuh gives device code, written for jitkern.
//
//   cupy::type_traits::{conditional, enable_if, is_same}   (NVRTC has no <type_traits>)
//   M_PI (and the other M_* of <math.h>)                  jitkern/math_names.h
//   float16, bfloat16                                      declared here, defined in
//                                                          cupy/float16.cuh, cupy/bfloat16.cuh
//   CUPY_FOR(i, n)               a grid-stride loop over 0 <= i < n
//   CArrayIterator<T, index_t>   a strided random-access iterator
//   CArray<T, NDIM, C_CONTIGUOUS = false, USE_32BIT_INDEXING = false>
//                                a strided view: size(), shape(), strides(), data(),
//                                a[flat index] (C order), a[index array of NDIM],
//                                begin()/end()
//   CIndexer<NDIM, USE_32BIT_INDEXING = false>
//                                size(), set(flat index), get() -> the NDIM indices
//   _floor_divide(x, y)          Python's // for int, long long, unsigned, unsigned long
//                                long (0 where y == 0), float and double (floor(x / y))
//
// Strides are in bytes, as in CuPy. A RawKernel receives arrays as plain pointers, so a
// CArray is built in device code: CArray<float, 2> a(ptr, shape, strides), or for
// C-contiguous data CArray<float, 2, true> a(ptr, shape); shape and strides may be
// pointers or braced lists ({n0, n1}). jitkern also keeps its earlier form
// CArray<float, 2> a(ptr, size, shape, strides), and CIndexer<2> ind(size, shape).
//
// Included by itself, this header also includes <cupy/complex.cuh> (complex<T>) and
// <cupy/float16.cuh>, so code that names them after including only carray.cuh compiles
// (in an elementwise or reduction kernel's environment, where
// JITKERN_STRING_KERNEL_ENVIRONMENT is defined, they come where the kernel uses them).

#ifndef JITKERN_CUPY_CARRAY_CUH
#define JITKERN_CUPY_CARRAY_CUH

#include <jitkern/math_names.h>
#ifndef JITKERN_STRING_KERNEL_ENVIRONMENT
#include <cupy/complex.cuh>
#endif

namespace cupy {
namespace type_traits {

template <bool B, class T, class F>
struct conditional {
    typedef T type;
};
template <class T, class F>
struct conditional<false, T, F> {
    typedef F type;
};

template <bool B, class T = void>
struct enable_if {};
template <class T>
struct enable_if<true, T> {
    typedef T type;
};

template <typename T, typename U>
struct is_same {
    static const bool value = false;
};
template <typename T>
struct is_same<T, T> {
    static const bool value = true;
};

}  // namespace type_traits
}  // namespace cupy

class float16;
class bfloat16;

#define CUPY_FOR(i, n)                                                              \
    for (ptrdiff_t i = static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x; \
         i < (n); i += static_cast<ptrdiff_t>(blockDim.x) * gridDim.x)

// A pointer that advances by `step` elements: the iterator of a strided CArray.
template <typename T, typename index_t>
class CArrayIterator {
public:
    typedef ptrdiff_t difference_type;
    typedef T value_type;
    typedef T* pointer;
    typedef T& reference;

private:
    T* at_;
    index_t step_;

public:
    __host__ __device__ CArrayIterator(T* head, index_t step) : at_(head), step_(step) {}
    __host__ __device__ T& operator*() const { return *at_; }
    __host__ __device__ T* operator->() const { return at_; }
    __host__ __device__ T& operator[](index_t n) const { return at_[step_ * n]; }
    __host__ __device__ CArrayIterator& operator++() { at_ += step_; return *this; }
    __host__ __device__ CArrayIterator& operator--() { at_ -= step_; return *this; }
    __host__ __device__ CArrayIterator operator++(int) { CArrayIterator was = *this; at_ += step_; return was; }
    __host__ __device__ CArrayIterator operator--(int) { CArrayIterator was = *this; at_ -= step_; return was; }
    __host__ __device__ CArrayIterator& operator+=(ptrdiff_t n) { at_ += step_ * n; return *this; }
    __host__ __device__ CArrayIterator& operator-=(ptrdiff_t n) { at_ -= step_ * n; return *this; }
    __host__ __device__ CArrayIterator operator+(ptrdiff_t n) const { return CArrayIterator(at_ + step_ * n, step_); }
    __host__ __device__ CArrayIterator operator-(ptrdiff_t n) const { return CArrayIterator(at_ - step_ * n, step_); }
    __host__ __device__ difference_type operator-(const CArrayIterator& o) const { return (at_ - o.at_) / step_; }
    __host__ __device__ bool operator==(const CArrayIterator& o) const { return at_ == o.at_ && step_ == o.step_; }
    __host__ __device__ bool operator!=(const CArrayIterator& o) const { return !(*this == o); }
    __host__ __device__ bool operator<(const CArrayIterator& o) const { return at_ < o.at_; }
    __host__ __device__ bool operator>(const CArrayIterator& o) const { return at_ > o.at_; }
    __host__ __device__ bool operator<=(const CArrayIterator& o) const { return at_ <= o.at_; }
    __host__ __device__ bool operator>=(const CArrayIterator& o) const { return at_ >= o.at_; }
};

template <typename T, int _ndim, bool _c_contiguous = false, bool _use_32bit_indexing = false>
class CArray {
public:
    static const int ndim = _ndim;
    static const bool c_contiguous = _c_contiguous;
    typedef typename cupy::type_traits::conditional<_use_32bit_indexing, int, ptrdiff_t>::type
        index_t;
    typedef typename cupy::type_traits::conditional<_c_contiguous, T*,
                                                    CArrayIterator<T, index_t> >::type iterator;

private:
    enum { N = _ndim > 0 ? _ndim : 1 };
    T* data_;
    ptrdiff_t size_;
    ptrdiff_t shape_[N];
    ptrdiff_t strides_[N];

    template <typename I1, typename I2>
    __device__ void set_layout(const I1* shape, const I2* strides) {
        size_ = 1;
        for (int d = 0; d < _ndim; ++d) {
            shape_[d] = shape[d];
            strides_[d] = strides[d];
            size_ *= shape_[d];
        }
    }
    template <typename I>
    __device__ void set_contiguous(const I* shape) {
        size_ = 1;
        ptrdiff_t stride = sizeof(T);
        for (int d = _ndim - 1; d >= 0; --d) {
            shape_[d] = shape[d];
            strides_[d] = stride;
            stride *= shape_[d];
            size_ *= shape_[d];
        }
    }
    __device__ const char* address(ptrdiff_t i) const {
        // the flat index in C order, unravelled from the innermost dimension out
        const char* p = reinterpret_cast<const char*>(data_);
        index_t rest = static_cast<index_t>(i);
        for (int d = _ndim - 1; d > 0; --d) {
            const index_t extent = static_cast<index_t>(shape_[d]);
            p += static_cast<index_t>(strides_[d]) * (rest % extent);
            rest /= extent;
        }
        if (_ndim > 0) p += static_cast<index_t>(strides_[0]) * rest;
        return p;
    }

public:
    __device__ CArray() : data_(0), size_(1) {
        for (int d = 0; d < N; ++d) shape_[d] = strides_[d] = 0;
    }
    // shape and strides (bytes): ndim entries each, as pointers or braced lists
    template <typename I1, typename I2>
    __device__ CArray(T* data, const I1* shape, const I2* strides) : data_(data) {
        set_layout(shape, strides);
    }
    template <typename I1, typename I2>
    __device__ CArray(T* data, const std::initializer_list<I1> shape,
                      const std::initializer_list<I2> strides) : data_(data) {
        set_layout(shape.begin(), strides.begin());
    }
    // C-contiguous views only: the strides follow from the shape
    template <typename I, typename U = T>
    __device__ CArray(typename cupy::type_traits::enable_if<_c_contiguous, U>::type* data,
                      const I* shape) : data_(data) {
        set_contiguous(shape);
    }
    template <typename I, typename U = T>
    __device__ CArray(typename cupy::type_traits::enable_if<_c_contiguous, U>::type* data,
                      const std::initializer_list<I> shape) : data_(data) {
        set_contiguous(shape.begin());
    }
    // jitkern's earlier form: the element count given
    __device__ CArray(T* data, ptrdiff_t size, const ptrdiff_t* shape, const ptrdiff_t* strides)
        : data_(data) {
        set_layout(shape, strides);
        size_ = size;
    }

    __device__ T* data() const { return data_; }
    __device__ ptrdiff_t size() const { return size_; }
    __device__ const ptrdiff_t* shape() const { return shape_; }
    __device__ const ptrdiff_t* strides() const { return strides_; }

    // the element at an index array (or braced list) of ndim entries
    template <typename I>
    __device__ const T& operator[](const I (&idx)[N]) const {
        const char* p = reinterpret_cast<const char*>(data_);
        for (int d = 0; d < _ndim; ++d)
            p += static_cast<index_t>(strides_[d]) * static_cast<index_t>(idx[d]);
        return *reinterpret_cast<const T*>(p);
    }
    template <typename I>
    __device__ T& operator[](const I (&idx)[N]) {
        return const_cast<T&>(static_cast<const CArray&>(*this)[idx]);
    }
    template <typename I>
    __device__ const T& operator[](const std::initializer_list<I> idx) const {
        return (*this)[*reinterpret_cast<const I(*)[N]>(idx.begin())];
    }
    template <typename I>
    __device__ T& operator[](const std::initializer_list<I> idx) {
        return (*this)[*reinterpret_cast<const I(*)[N]>(idx.begin())];
    }

    // the element at a flat index, in C order
    __device__ const T& operator[](ptrdiff_t i) const {
        if (_c_contiguous) return data_[static_cast<index_t>(i)];
        return *reinterpret_cast<const T*>(address(i));
    }
    __device__ T& operator[](ptrdiff_t i) {
        return const_cast<T&>(static_cast<const CArray&>(*this)[i]);
    }

    __device__ iterator begin() const { return make_iterator(0); }
    __device__ iterator end() const { return make_iterator(size_); }

private:
    template <typename It>
    struct iterator_maker {
        __device__ static It at(T* data, const ptrdiff_t* strides, ptrdiff_t k) {
            const index_t step = static_cast<index_t>(strides[0] / (ptrdiff_t)sizeof(T));
            return It(data + step * k, step);
        }
    };
    template <typename P>
    struct iterator_maker<P*> {
        __device__ static P* at(T* data, const ptrdiff_t*, ptrdiff_t k) { return data + k; }
    };
    __device__ iterator make_iterator(ptrdiff_t k) const {
        return iterator_maker<iterator>::at(data_, strides_, k);
    }
};

// A 0-dimensional view: one element, whatever the index.
template <typename T, bool _c_contiguous, bool _use_32bit_indexing>
class CArray<T, 0, _c_contiguous, _use_32bit_indexing> {
public:
    static const int ndim = 0;
    static const bool c_contiguous = _c_contiguous;
    typedef typename cupy::type_traits::conditional<_use_32bit_indexing, int, ptrdiff_t>::type
        index_t;
    typedef T* iterator;

private:
    T* data_;
    ptrdiff_t size_;

public:
    __device__ CArray() : data_(0), size_(1) {}
    __device__ explicit CArray(T* data) : data_(data), size_(1) {}
    template <typename I>
    __device__ CArray(T* data, I size) : data_(data), size_(size) {}
    template <typename I1, typename I2>
    __device__ CArray(T* data, const I1*, const I2*) : data_(data), size_(1) {}
    __device__ CArray(T* data, const std::initializer_list<int>, const std::initializer_list<int>)
        : data_(data), size_(1) {}

    __device__ T* data() const { return data_; }
    __device__ ptrdiff_t size() const { return size_; }
    __device__ const ptrdiff_t* shape() const { return 0; }
    __device__ const ptrdiff_t* strides() const { return 0; }
    template <typename U>
    __device__ T& operator[](const U&) { return *data_; }
    template <typename U>
    __device__ T operator[](const U&) const { return *data_; }
    __device__ iterator begin() const { return data_; }
    __device__ iterator end() const { return data_ + 1; }
};

template <int _ndim, bool _use_32bit_indexing = false>
class CIndexer {
public:
    static const int ndim = _ndim;

private:
    ptrdiff_t size_;
    ptrdiff_t shape_[_ndim];
    ptrdiff_t index_[_ndim];
    typedef ptrdiff_t index_t[_ndim];

    template <typename I1, typename I2>
    __device__ void init(const I1* shape, const I2* index) {
        size_ = 1;
        for (int d = 0; d < _ndim; ++d) {
            shape_[d] = shape[d];
            index_[d] = index ? static_cast<ptrdiff_t>(index[d]) : 0;
            size_ *= shape_[d];
        }
    }
    // unravel i (C order) with U arithmetic: 32-bit where the size allows (much faster)
    template <typename U>
    __device__ void unravel(U i) {
        for (int d = _ndim - 1; d > 0; --d) {
            const U extent = static_cast<U>(shape_[d]);
            const U q = i / extent;
            index_[d] = static_cast<ptrdiff_t>(i - q * extent);
            i = q;
        }
        index_[0] = static_cast<ptrdiff_t>(i);
    }

public:
    __device__ CIndexer() : size_(1) {
        for (int d = 0; d < _ndim; ++d) shape_[d] = index_[d] = 0;
    }
    template <typename I>
    __device__ explicit CIndexer(const I* shape) { init(shape, static_cast<const I*>(0)); }
    template <typename I1, typename I2>
    __device__ CIndexer(const I1* shape, const I2* index) { init(shape, index); }
    template <typename I>
    __device__ CIndexer(const std::initializer_list<I> shape) {
        init(shape.begin(), static_cast<const I*>(0));
    }
    template <typename I1, typename I2>
    __device__ CIndexer(const std::initializer_list<I1> shape,
                        const std::initializer_list<I2> index) {
        init(shape.begin(), index.begin());
    }
    // jitkern's earlier form: the element count given
    __device__ CIndexer(ptrdiff_t size, const ptrdiff_t* shape) {
        init(shape, static_cast<const ptrdiff_t*>(0));
        size_ = size;
    }

    __device__ ptrdiff_t size() const { return size_; }
    __device__ const ptrdiff_t* shape() const { return shape_; }
    __device__ const index_t& get() const { return index_; }
    __device__ void set(ptrdiff_t i) {
        if (_ndim == 1) {
            index_[0] = i;
        } else if (!_use_32bit_indexing && size_ > (1LL << 31)) {
            unravel(static_cast<unsigned long long>(i));
        } else {
            unravel(static_cast<unsigned int>(i));
        }
    }
};

// No dimensions: one position, nothing to unravel.
template <bool _use_32bit_indexing>
class CIndexer<0, _use_32bit_indexing> {
public:
    static const int ndim = 0;

private:
    ptrdiff_t size_;

public:
    __device__ CIndexer() : size_(1) {}
    template <typename I>
    __device__ explicit CIndexer(I size) : size_(size) {}
    template <typename I>
    __device__ explicit CIndexer(const I*) : size_(1) {}
    template <typename I1, typename I2>
    __device__ CIndexer(const I1*, const I2*) : size_(1) {}
    __device__ CIndexer(const std::initializer_list<int>) : size_(1) {}
    __device__ CIndexer(const std::initializer_list<int>, const std::initializer_list<int>)
        : size_(1) {}
    __device__ ptrdiff_t size() const { return size_; }
    __device__ void set(ptrdiff_t) {}
    __device__ const ptrdiff_t* get() const { return 0; }
};

// Python's floor division; an integer division by zero gives 0 (CuPy's convention).
template <typename I>
__device__ __forceinline__ I _jk_floor_divide_signed(I x, I y) {
    if (y == 0) return 0;
    const I q = x / y;
    return (q * y != x && ((x < 0) != (y < 0))) ? q - 1 : q;
}
__device__ __forceinline__ int _floor_divide(int x, int y) {
    return _jk_floor_divide_signed(x, y);
}
__device__ __forceinline__ long long _floor_divide(long long x, long long y) {
    return _jk_floor_divide_signed(x, y);
}
__device__ __forceinline__ unsigned _floor_divide(unsigned x, unsigned y) {
    return y == 0 ? 0 : x / y;
}
__device__ __forceinline__ unsigned long long _floor_divide(unsigned long long x,
                                                            unsigned long long y) {
    return y == 0 ? 0 : x / y;
}
__device__ __forceinline__ float _floor_divide(float x, float y) { return floorf(x / y); }
__device__ __forceinline__ double _floor_divide(double x, double y) { return floor(x / y); }

#endif  // JITKERN_CUPY_CARRAY_CUH

// float16 for code that includes only this header (see above); outside the include guard
// so that carray.cuh and float16.cuh can include each other in either order.
#if !defined(JITKERN_STRING_KERNEL_ENVIRONMENT) && !defined(JITKERN_CUPY_FLOAT16_CUH)
#include <cupy/float16.cuh>
#endif
