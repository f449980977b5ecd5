"""Every name ``dir()`` lists on jitkern's public modules resolves (issue 27: ``dir(jitkern)``
listed ``backend`` and ``texture``, and touching either raised ModuleNotFoundError). Each is
read in a fresh process, as a user's first touch would, so no earlier import hides a
failure."""

import subprocess
import sys
import textwrap

import pytest

MODULES = ["jitkern", "jitkern.jit", "jitkern.cuda", "jitkern.random"]


@pytest.mark.parametrize("module", MODULES)
def test_every_name_dir_lists_resolves(module):
    script = textwrap.dedent(f"""
        import functools, json
        import jitkern
        m = functools.reduce(getattr, {module!r}.split(".")[1:], jitkern)
        bad = {{}}
        for name in dir(m):
            try:
                getattr(m, name)
            except Exception as exc:
                bad[name] = f"{{type(exc).__name__}}: {{exc}}"[:200]
        print(json.dumps([len(dir(m)), bad]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    import json

    count, bad = json.loads(done.stdout.strip().splitlines()[-1])
    assert bad == {}, f"{module}: names dir() lists that do not resolve: {bad}"
    assert count > 3


def test_dir_lists_the_lazy_names_of_jitkern_cuda():
    import jitkern.cuda

    listed = dir(jitkern.cuda)
    for name in ("runtime", "texture", "Stream", "Event", "Device", "set_allocator"):
        assert name in listed
