// cupy/unstructured_void.cuh: CuPy's type for a NumPy void dtype without fields ("V8").
//
//   cupy::UnstructuredVoid<SIZE>   SIZE bytes (`data`), compared byte by byte (==, !=);
//                                  made or assigned from any value: its first bytes are
//                                  copied, the rest zeroed (NumPy's rule for void casts)

#ifndef JITKERN_CUPY_UNSTRUCTURED_VOID_CUH
#define JITKERN_CUPY_UNSTRUCTURED_VOID_CUH

#include <cupy/carray.cuh>

namespace cupy {

template <size_t Size>
class UnstructuredVoid {
public:
    char data[Size];

    UnstructuredVoid() = default;
    template <typename T>
    explicit __device__ UnstructuredVoid(const T& other) {
        *this = other;
    }

    __device__ bool operator==(const UnstructuredVoid& other) const {
        for (size_t k = 0; k < Size; ++k)
            if (data[k] != other.data[k]) return false;
        return true;
    }
    __device__ bool operator!=(const UnstructuredVoid& other) const { return !(*this == other); }

    template <typename T>
    __device__ UnstructuredVoid& operator=(const T& other) {
        const size_t n = Size < sizeof(T) ? Size : sizeof(T);
        const char* bytes = reinterpret_cast<const char*>(&other);
        for (size_t k = 0; k < n; ++k) data[k] = bytes[k];
        for (size_t k = n; k < Size; ++k) data[k] = 0;
        return *this;
    }
};

}  // namespace cupy

#endif  // JITKERN_CUPY_UNSTRUCTURED_VOID_CUH
