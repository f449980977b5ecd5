from jitkern.compiler.strings.c_params import kernel_params


def test_reads_extern_c_params():
    src = r'''
    // a comment with __global__ void my_add(int) in it
    extern "C" __global__
    void my_add(const float* x1, const float *__restrict__ x2, float y[], unsigned int N,
                complex<float>* z, const Foo<int, 3> s) { }
    '''
    params = kernel_params(src, "my_add")
    assert [(p.name, p.pointer) for p in params] == [
        ("x1", True), ("x2", True), ("y", True), ("N", False), ("z", True), ("s", False)]
    assert params[3].ctype == "unsigned int"
    assert params[5].ctype == "const Foo<int, 3>"


def test_no_params_and_unknown_names():
    assert kernel_params('extern "C" __global__ void k(void) {}', "k") == ()
    assert kernel_params('extern "C" __global__ void k() {}', "k") == ()
    assert kernel_params('extern "C" __global__ void k() {}', "other") is None


def test_takes_the_definition_not_a_similarly_named_kernel():
    src = 'extern "C" __global__ void kk(float* a) {}\nextern "C" __global__ void k(int n) {}'
    assert [p.name for p in kernel_params(src, "k")] == ["n"]


def test_types_are_read_through_aliases_and_struct_layouts_match_c():
    import numpy as np

    src = r"""
    #define REAL double
    typedef float* fptr;
    using index_t = long long;
    struct inner { char c; double d; };
    struct outer { int i; inner in[2]; short s; };
    extern "C" __global__ void k(REAL* a, fptr b, index_t n, outer o, void* v, float4 q) {}
    """
    a, b, n, o, v, q = kernel_params(src, "k")
    assert (a.pointer, a.dtype, b.pointer, b.dtype) == (True, "float64", True, "float32")
    assert (n.pointer, n.dtype, v.any_pointee) == (False, "int64", True)
    inner = np.dtype([("c", "i1"), ("d", "f8")], align=True)
    outer = np.dtype([("i", "i4"), ("in", inner, (2,)), ("s", "i2")], align=True)
    assert (o.struct.size, o.struct.align) == (outer.itemsize, outer.alignment)
    assert [(f.name, f.offset) for f in o.struct.fields] == [
        (name, outer.fields[name][1]) for name in ("i", "in", "s")]
    assert (q.struct.size, q.struct.align, [f.name for f in q.struct.fields]) == (
        16, 16, ["x", "y", "z", "w"])


def test_template_arguments_are_put_in_for_the_template_parameters():
    from jitkern.compiler.strings.c_params import template_params

    src = "template<typename T, int N> __global__ void f(const T* x, T a, int n) {}"
    x, a, n = template_params(src, "f<unsigned short, 3>")
    assert (x.ctype, x.dtype, a.ctype, a.dtype, n.dtype) == (
        "const unsigned short*", "uint16", "unsigned short", "uint16", "int32")
    assert template_params(src, "f<float>") is None  # one argument for two parameters
    assert template_params(src, "g<float, 1>") is None
