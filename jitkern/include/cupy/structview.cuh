// cupy/structview.cuh: CuPy's view of a NumPy structured dtype as a C++ type.
//
//   cupy::raw_structview_storage<SIZE, ALIGN>   SIZE bytes aligned to ALIGN
//   cupy::Field<T, OFFSET>                      a field: its type and byte offset
//   cupy::StructView<STORAGE, Field<...>...>    a record of those fields:
//       field_count, size, alignment, storage_type
//       x.at<I>()              field I (by position), as a reference
//       StructView(other)      field by field, from a record of as many fields
//       StructView(value)      explicit: every field set to value
//       x = other, x = value   the same, as assignments
//       x == y, x != y         field by field (records of as many fields)
//   cupy::is_struct_view<T>::value
//
// jitkern's ElementwiseKernel gives record arrays a struct with named fields (x.mass) that
// also has field_count and at<I>() (docs/compat.md); this header is for code that builds
// its own views. It needs no standard library (its index sequences are its own).

#ifndef JITKERN_CUPY_STRUCTVIEW_CUH
#define JITKERN_CUPY_STRUCTVIEW_CUH

#include <cupy/carray.cuh>

namespace cupy {

template <typename Storage, typename... Fields>
class StructView;

template <typename T>
struct is_struct_view {
    static constexpr bool value = false;
};
template <typename Storage, typename... Fields>
struct is_struct_view<StructView<Storage, Fields...> > {
    static constexpr bool value = true;
};

template <size_t Size, size_t Align>
struct alignas(Align) raw_structview_storage {
    static_assert(Align != 0, "a record's alignment is at least 1");
    char _data[Size];
};

template <typename T, size_t Offset>
struct Field {
    using type = T;
    static constexpr size_t offset = Offset;
};

namespace structview_detail {

template <size_t... I>
struct indices {};
template <size_t N, size_t... I>
struct make_indices : make_indices<N - 1, N - 1, I...> {};
template <size_t... I>
struct make_indices<0, I...> {
    typedef indices<I...> type;
};

// the I-th of Fields...
template <size_t I, typename First, typename... Rest>
struct nth : nth<I - 1, Rest...> {};
template <typename First, typename... Rest>
struct nth<0, First, Rest...> {
    typedef First type;
};

}  // namespace structview_detail

template <typename Storage, typename... Fields>
class StructView {
    template <size_t I>
    using field = typename structview_detail::nth<I, Fields...>::type;
    typedef typename structview_detail::make_indices<sizeof...(Fields)>::type all_fields;

public:
    using storage_type = Storage;
    static constexpr size_t size = sizeof(Storage);
    static constexpr size_t alignment = alignof(Storage);
    static constexpr size_t field_count = sizeof...(Fields);

    StructView() = default;
    __device__ StructView(const StructView& other) : data_{} { copy_fields(other, all_fields()); }
    template <typename S, typename... F>
    explicit __device__ StructView(const StructView<S, F...>& other) : data_{} {
        static_assert(sizeof...(F) == sizeof...(Fields), "records of different field counts");
        copy_fields(other, all_fields());
    }
    template <typename T>
    explicit __device__ StructView(const T& value) : data_{} {
        fill(value, all_fields());
    }

    template <size_t I>
    __device__ typename field<I>::type& at() {
        return *reinterpret_cast<typename field<I>::type*>(reinterpret_cast<char*>(&data_) +
                                                           field<I>::offset);
    }
    template <size_t I>
    __device__ const typename field<I>::type& at() const {
        return *reinterpret_cast<const typename field<I>::type*>(
            reinterpret_cast<const char*>(&data_) + field<I>::offset);
    }

    __device__ StructView& operator=(const StructView& other) {
        copy_fields(other, all_fields());
        return *this;
    }
    template <typename S, typename... F>
    __device__ StructView& operator=(const StructView<S, F...>& other) {
        static_assert(sizeof...(F) == sizeof...(Fields), "records of different field counts");
        copy_fields(other, all_fields());
        return *this;
    }
    template <typename T>
    __device__ StructView& operator=(const T& value) {
        fill(value, all_fields());
        return *this;
    }

    template <typename S, typename... F>
    __device__ bool operator==(const StructView<S, F...>& other) const {
        static_assert(sizeof...(F) == sizeof...(Fields), "records of different field counts");
        return equal(other, all_fields());
    }
    template <typename S, typename... F>
    __device__ bool operator!=(const StructView<S, F...>& other) const {
        return !(*this == other);
    }

private:
    // The storage's bytes between fields are left as they are (zero when constructed).
    Storage data_{};

    template <typename O, size_t... I>
    __device__ void copy_fields(const O& other, structview_detail::indices<I...>) {
        ((at<I>() = other.template at<I>()), ...);
    }
    template <typename T, size_t... I>
    __device__ void fill(const T& value, structview_detail::indices<I...>) {
        ((at<I>() = value), ...);
    }
    template <typename O, size_t... I>
    __device__ bool equal(const O& other, structview_detail::indices<I...>) const {
        return (true && ... && (at<I>() == other.template at<I>()));
    }
};

}  // namespace cupy

#endif  // JITKERN_CUPY_STRUCTVIEW_CUH
