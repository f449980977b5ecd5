// cupy/carray.cuh: the names raw CUDA written for CuPy uses from CuPy's carray.cuh.
//
//   complex<T>            from <cupy/complex.cuh> (jitkern's complex)
//   float16               __half from <cuda_fp16.h>
//   CArray<T, NDIM, C_CONTIGUOUS = false, USE_32BIT_INDEXING = false>
//                         a strided view: data(), size(), shape(), strides(),
//                         a[flat index] (C order), a[index array of NDIM]
//   CIndexer<NDIM, USE_32BIT_INDEXING = false>
//                         size(), shape(), set(flat index), get() -> the NDIM indices
//   CUPY_FOR(i, n)        a grid-stride loop over 0 <= i < n
//
// Strides are in bytes, as in CuPy. A RawKernel receives arrays as plain pointers
// (CuPy's and jitkern's alike), so CArray/CIndexer here are built in device code:
// CArray<float, 2> a(ptr, size, shape, strides); the ElementwiseKernel's `raw`
// parameters are jitkern's own view with the same members.

#ifndef JITKERN_CUPY_CARRAY_CUH
#define JITKERN_CUPY_CARRAY_CUH

#include <cuda_fp16.h>
#include <cupy/complex.cuh>

typedef __half float16;

#define CUPY_FOR(i, n)                                                              \
    for (ptrdiff_t i = static_cast<ptrdiff_t>(blockIdx.x) * blockDim.x + threadIdx.x; \
         i < static_cast<ptrdiff_t>(n);                                              \
         i += static_cast<ptrdiff_t>(blockDim.x) * gridDim.x)

template <bool USE_32BIT>
struct _jitkern_cupy_index {
    typedef ptrdiff_t type;
};
template <>
struct _jitkern_cupy_index<true> {
    typedef int type;
};

template <typename T, int _ndim, bool _c_contiguous = false, bool _use_32bit_indexing = false>
class CArray {
public:
    static const int ndim = _ndim;
    static const bool c_contiguous = _c_contiguous;
    typedef typename _jitkern_cupy_index<_use_32bit_indexing>::type index_t;

private:
    T* data_;
    ptrdiff_t size_;
    ptrdiff_t shape_[_ndim > 0 ? _ndim : 1];
    ptrdiff_t strides_[_ndim > 0 ? _ndim : 1];

public:
    __host__ __device__ CArray() : data_(0), size_(0) {}
    // shape and strides (bytes) of ndim entries each.
    __host__ __device__ CArray(T* data, ptrdiff_t size, const ptrdiff_t* shape,
                               const ptrdiff_t* strides)
        : data_(data), size_(size) {
        for (int d = 0; d < _ndim; ++d) {
            shape_[d] = shape[d];
            strides_[d] = strides[d];
        }
    }
    __host__ __device__ T* data() const { return data_; }
    __host__ __device__ ptrdiff_t size() const { return size_; }
    __host__ __device__ const ptrdiff_t* shape() const { return shape_; }
    __host__ __device__ const ptrdiff_t* strides() const { return strides_; }

    // The element at an index array of ndim entries.
    template <typename I>
    __device__ T& operator[](const I* idx) const {
        char* p = const_cast<char*>(reinterpret_cast<const char*>(data_));  // T may be const
        for (int d = 0; d < _ndim; ++d) p += strides_[d] * static_cast<index_t>(idx[d]);
        return *reinterpret_cast<T*>(p);
    }

    // The element at a flat index, in C order.
    __device__ T& operator[](ptrdiff_t i) const {
        if (_c_contiguous) return data_[static_cast<index_t>(i)];
        char* p = const_cast<char*>(reinterpret_cast<const char*>(data_));  // T may be const
        index_t rest = static_cast<index_t>(i);
        for (int d = _ndim - 1; d > 0; --d) {
            const index_t extent = static_cast<index_t>(shape_[d]);
            p += strides_[d] * (rest % extent);
            rest /= extent;
        }
        if (_ndim > 0) p += strides_[0] * rest;
        return *reinterpret_cast<T*>(p);
    }
};

template <int _ndim, bool _use_32bit_indexing = false>
class CIndexer {
public:
    static const int ndim = _ndim;
    typedef typename _jitkern_cupy_index<_use_32bit_indexing>::type index_t;

private:
    ptrdiff_t size_;
    ptrdiff_t shape_[_ndim > 0 ? _ndim : 1];
    ptrdiff_t index_[_ndim > 0 ? _ndim : 1];

public:
    __host__ __device__ CIndexer() : size_(0) {}
    __host__ __device__ CIndexer(ptrdiff_t size, const ptrdiff_t* shape) : size_(size) {
        for (int d = 0; d < _ndim; ++d) {
            shape_[d] = shape[d];
            index_[d] = 0;
        }
    }
    __host__ __device__ ptrdiff_t size() const { return size_; }
    __host__ __device__ const ptrdiff_t* shape() const { return shape_; }

    // Unravel the flat index i (C order) into get()[0..ndim).
    __device__ void set(ptrdiff_t i) {
        index_t rest = static_cast<index_t>(i);
        for (int d = _ndim - 1; d > 0; --d) {
            const index_t extent = static_cast<index_t>(shape_[d]);
            index_[d] = rest % extent;
            rest /= extent;
        }
        if (_ndim > 0) index_[0] = rest;
    }
    __device__ const ptrdiff_t* get() const { return index_; }
};

#endif  // JITKERN_CUPY_CARRAY_CUH
