// jitkern/traits.cuh: the type traits jitkern's headers need, for NVRTC, which has no
// <type_traits>: enable_if, and is_arithmetic (the built-in arithmetic types).

#ifndef JITKERN_TRAITS_CUH
#define JITKERN_TRAITS_CUH

namespace jitkern {
namespace traits {

template <bool B, typename T = void>
struct enable_if {};
template <typename T>
struct enable_if<true, T> {
    typedef T type;
};

template <typename T>
struct is_arithmetic {
    static const bool value = false;
};
#define JITKERN_ARITHMETIC(T)           \
    template <>                         \
    struct is_arithmetic<T> {           \
        static const bool value = true; \
    };
JITKERN_ARITHMETIC(bool)
JITKERN_ARITHMETIC(char)
JITKERN_ARITHMETIC(signed char)
JITKERN_ARITHMETIC(unsigned char)
JITKERN_ARITHMETIC(short)
JITKERN_ARITHMETIC(unsigned short)
JITKERN_ARITHMETIC(int)
JITKERN_ARITHMETIC(unsigned int)
JITKERN_ARITHMETIC(long)
JITKERN_ARITHMETIC(unsigned long)
JITKERN_ARITHMETIC(long long)
JITKERN_ARITHMETIC(unsigned long long)
JITKERN_ARITHMETIC(float)
JITKERN_ARITHMETIC(double)
#undef JITKERN_ARITHMETIC

}  // namespace traits
}  // namespace jitkern

#endif  // JITKERN_TRAITS_CUH
