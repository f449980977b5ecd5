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
