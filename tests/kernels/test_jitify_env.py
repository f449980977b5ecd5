"""jitify=True as Jitify behaves (issue 25, section 3): every standard header Jitify provides
compiles, and an #include that cannot be found is skipped with a warning."""

import os
import re
import warnings

import numpy as np
import pytest

import jitkern
from jitkern.compiler.strings.jitify import STAND_INS, shim_headers

ARCH = "sm_90"

#: The headers Jitify serves from memory (its "jitsafe" headers).
JITIFY_LIST = ["algorithm", "assert.h", "cassert", "cfloat", "climits", "cmath", "complex",
               "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "float.h",
               "iostream", "istream", "iterator", "limits", "limits.h", "math.h", "memory.h",
               "mutex", "ostream", "sstream", "stddef.h", "stdexcept", "stdint.h", "stdio.h",
               "stdlib.h", "string", "string.h", "time.h", "tuple", "type_traits", "utility",
               "vector"]


def test_every_header_jitify_provides_is_there():
    assert set(JITIFY_LIST) <= set(shim_headers())


#: For each stand-in, code naming what it declares (for host-side use: no call in the kernel).
STAND_IN_USES = {
    "cstdio": "std::FILE* f = nullptr; (void)f; std::printf(\"%d\\n\", 1);",
    "stdio.h": "FILE* f = nullptr; (void)f; printf(\"%d\\n\", 2);",
    "iostream": "std::ostream* os = nullptr; std::istream* is = nullptr; (void)os; (void)is;",
    "istream": "std::istream* is = nullptr; (void)is;",
    "ostream": "std::ostream* os = nullptr; (void)os;",
    "sstream": "std::ostream* os = nullptr; (void)os;",
    "memory.h": "char a[4] = {1, 2, 3, 4}, b[4]; memcpy(b, a, 4); o[1] = b[2];",
    "mutex": "std::mutex* m = nullptr; (void)m;",
    "stdexcept": "std::runtime_error* e = nullptr; (void)e;",
    "string": "std::string* s = nullptr; (void)s; o[1] = sizeof(std::basic_string<char>);",
    "time.h": "time_t t = 0; clock_t c = clock(); o[1] = (long long)t + (c > 0);",
    "vector": "std::vector<int>* v = nullptr; (void)v;",
}


@pytest.mark.parametrize("header", STAND_INS)
def test_each_stand_in_compiles_with_what_it_declares(header):
    src = (f"#include <{header}>\n"
           f'extern "C" __global__ void k(long long* o) {{ o[0] = 1; {STAND_IN_USES[header]} }}\n')
    info = jitkern.RawKernel(src, "k", jitify=True).inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


def test_the_whole_jitify_list_compiles_in_one_kernel():
    src = "".join(f"#include <{h}>\n" for h in JITIFY_LIST) + r"""
extern "C" __global__ void k(double* o, int n) {
    o[0] = std::numeric_limits<double>::max() + INT_MAX + FLT_MAX + UINT8_MAX;
    o[1] = std::min(1.0, 2.0) + std::get<1>(std::make_tuple(1, 2.5)) + std::sqrt(4.0);
    std::complex<double> z(1.0, 2.0);
    o[2] = z.imag() + (std::is_same<std::size_t, size_t>::value ? 1 : 0);
}
"""
    info = jitkern.RawKernel(src, "k", jitify=True).inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


MISSING = '''#include "not_anywhere.h"
#include <type_traits>
#include <nor/here.hpp>
extern "C" __global__ void k(float* o) {
    o[0] = std::is_same<int, int>::value;
}
'''


def test_a_missing_include_is_skipped_with_a_warning():
    with pytest.warns(UserWarning) as caught:
        info = jitkern.RawKernel(MISSING, "k", jitify=True).inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"
    messages = [str(w.message) for w in caught]
    assert any(re.search(r"k\.cu\(1\): warning: not_anywhere\.h: file not found", m) for m in messages)
    assert any(re.search(r"k\.cu\(3\): warning: nor/here\.hpp: file not found", m) for m in messages)
    assert "not_anywhere.h" in info.log  # Jitify's warning is in the compile log too
    assert info.source == MISSING  # the kernel's source as written


def test_without_jitify_a_missing_include_is_an_error():
    with pytest.raises(jitkern.CompileError, match="not_anywhere.h"):
        jitkern.RawKernel(MISSING, "k").inspect(arch=ARCH)


def test_a_later_error_keeps_its_line_and_shows_the_source_as_written():
    src = '#include "not_anywhere.h"\nextern "C" __global__ void k(float* o) {\n  o[0] = oops;\n}\n'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(jitkern.CompileError) as info:
            jitkern.RawKernel(src, "k", jitify=True).inspect(arch=ARCH)
    text = str(info.value)
    assert re.search(r"k\.cu\(3\): error: identifier \"oops\" is undefined", text)
    assert '1 | #include "not_anywhere.h"' in text


def test_a_kernel_with_a_skipped_include_is_not_cached():
    """The header may exist at the next compile: each compile looks again (and warns again)."""
    for _ in range(2):
        with pytest.warns(UserWarning) as caught:
            jitkern.RawKernel(MISSING, "k", jitify=True).inspect(arch=ARCH)
        assert sum("file not found" in str(w.message) for w in caught) == 2


def test_a_header_that_appears_is_used_at_the_next_compile(tmp_path):
    src = '#include "appears.h"\nextern "C" __global__ void k(float* o) { o[0] = APPEARS; }\n'
    opts = (f"-I{tmp_path}",)
    with pytest.warns(UserWarning, match="appears.h"), pytest.raises(jitkern.CompileError,
                                                                     match="APPEARS"):
        jitkern.RawKernel(src, "k", options=opts, jitify=True).inspect(arch=ARCH)
    (tmp_path / "appears.h").write_text("#define APPEARS 2.5f\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        info = jitkern.RawKernel(src, "k", options=opts, jitify=True).inspect(arch=ARCH)
    assert info.cubin[:4] == b"\x7fELF"


def test_a_missing_include_in_a_users_header_stays_an_error(tmp_path):
    """jitkern edits only the kernel's own source, never a file of the user's."""
    (tmp_path / "mine.h").write_text('#include "gone.h"\n')
    src = '#include "mine.h"\nextern "C" __global__ void k(float* o) { o[0] = 1; }\n'
    with pytest.raises(jitkern.CompileError, match="gone.h"):
        jitkern.RawKernel(src, "k", options=(f"-I{tmp_path}",), jitify=True).inspect(arch=ARCH)
    assert (tmp_path / "mine.h").read_text() == '#include "gone.h"\n'
    assert sorted(os.listdir(tmp_path)) == ["mine.h"]


@pytest.mark.gpu
def test_a_kernel_with_a_skipped_include_runs(rng):
    src = '#include "not_anywhere.h"\n#include <cmath>\n' \
          'extern "C" __global__ void k(const double* x, double* y, int n) {\n' \
          '  int i = blockDim.x * blockIdx.x + threadIdx.x;\n' \
          '  if (i < n) y[i] = std::exp(x[i]) * M_PI;\n}\n'
    with pytest.warns(UserWarning, match="not_anywhere.h"):
        k = jitkern.RawKernel(src, "k", jitify=True)
        n = 5000
        x = rng.standard_normal(n)
        y = jitkern.full(n, np.nan, np.float64)
        k(((n + 255) // 256,), (256,), (jitkern.asarray(x), y, np.int32(n)))
    np.testing.assert_allclose(y.get(), np.exp(x) * np.pi, rtol=1e-15)
