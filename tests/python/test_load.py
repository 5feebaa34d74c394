"""tessera.load: compiling a user's header of kernels into an extension on the fly, and caching it."""

import re
import subprocess
import textwrap
import time

import numpy as np
import pytest

import tessera
from tessera import loader

HEADER = """\
#pragma once
#include "tessera/tessera.h"
using namespace tessera;

// out = x * alpha, BLOCK elements per program.
inline void scale(Ptr<f32> x, Ptr<f32> out, Int n, Float alpha, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  Tensor mask = offs < n;
  store(out + offs, load(x + offs, mask) * alpha, mask);
}
TESSERA_PY_KERNEL(scale, x, out, n, alpha, BLOCK);

// Misuse: a tile of 3 elements (arange needs a power of two).
inline void bad_tile(Ptr<f32> out) {
  store(out + arange(0, 3), zeros<f32>({3}));
}
TESSERA_PY_KERNEL(bad_tile, out);
"""


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("tessera-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TESSERA_CACHE_DIR", str(path))
        yield path


@pytest.fixture(scope="module")
def header(tmp_path_factory, cache_dir):
    path = tmp_path_factory.mktemp("kernels") / "my_kernels.h"
    path.write_text(HEADER)
    return path


@pytest.fixture(scope="module")
def loaded(header):
    return tessera.load(header)


class CompileSpy:
    """Counts compiler runs made by tessera.load (by wrapping subprocess.run)."""

    def __init__(self, monkeypatch):
        self.calls = 0
        real = subprocess.run

        def run(*args, **kwargs):
            self.calls += 1
            return real(*args, **kwargs)
        monkeypatch.setattr(loader.subprocess, "run", run)


def test_load_compiles_and_launches(loaded, rng):
    assert sorted(loaded._names) == ["bad_tile", "scale"]
    n = 100
    x = rng.standard_normal(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    loaded.scale[lambda m: tessera.cdiv(n, m["BLOCK"])](x, out, n, 1.5, BLOCK=32)
    np.testing.assert_array_equal(out, x * np.float32(1.5))
    assert loaded.scale.arg_names == ["x", "out", "n", "alpha"]
    assert "scale" in repr(loaded)


def test_user_kernels_share_the_core_with_the_package(loaded):
    # The user's module links the same libtessera.so: its KernelDef is the package's type, its traced modules
    # are ordinary ir.Modules that run through the package's passes.
    module = loaded.scale.trace(BLOCK=16)
    assert isinstance(module, tessera.ir.Module)
    stages = module.run_passes(["canonicalize", "cse"])
    assert len(stages) == 2


def test_dsl_misuse_in_a_loaded_header_points_at_its_line(loaded, header):
    line = HEADER.splitlines().index("  store(out + arange(0, 3), zeros<f32>({3}));") + 1
    with pytest.raises(tessera.Error, match=re.escape(f"my_kernels.h:{line}")):
        loaded.bad_tile[1](np.zeros(4, np.float32))


def test_second_load_is_cached_in_process(header, loaded, monkeypatch):
    spy = CompileSpy(monkeypatch)
    start = time.perf_counter()
    again = tessera.load(header)
    assert time.perf_counter() - start < 0.5
    assert again is loaded and spy.calls == 0


def test_second_load_reuses_the_compiled_module_on_disk(header, loaded, monkeypatch, cache_dir):
    spy = CompileSpy(monkeypatch)
    monkeypatch.setattr(loader, "_loaded", {})  # as if in a new process
    start = time.perf_counter()
    again = tessera.load(header)
    assert time.perf_counter() - start < 2.0
    assert spy.calls == 0
    assert again is not loaded
    out = np.zeros(8, np.float32)
    again.scale[1](np.ones(8, np.float32), out, 8, 2.0, BLOCK=8)
    np.testing.assert_array_equal(out, 2.0)
    assert len(list(cache_dir.glob("python-modules/tessera_user_*.so"))) == 1


def test_changed_header_recompiles(tmp_path, cache_dir, monkeypatch):
    path = tmp_path / "changing.h"
    path.write_text(HEADER)
    first = tessera.load(path)
    spy = CompileSpy(monkeypatch)
    path.write_text(HEADER.replace("* alpha", "* alpha + 1.0f"))
    second = tessera.load(path)
    assert spy.calls == 1
    x = np.ones(8, np.float32)
    out1, out2 = np.zeros(8, np.float32), np.zeros(8, np.float32)
    first.scale[1](x, out1, 8, 2.0, BLOCK=8)
    second.scale[1](x, out2, 8, 2.0, BLOCK=8)
    np.testing.assert_array_equal(out1, 2.0)
    np.testing.assert_array_equal(out2, 3.0)


def test_compile_error_carries_the_compilers_message(tmp_path, cache_dir):
    path = tmp_path / "broken.h"
    path.write_text(textwrap.dedent("""\
        #include "tessera/tessera.h"
        using namespace tessera;
        inline void broken(Ptr<f32> x) { undefined_function(x); }
        TESSERA_PY_KERNEL(broken, x);
        """))
    with pytest.raises(tessera.Error, match=r"compiling broken\.h failed:(.|\n)*undefined_function"):
        tessera.load(path)


def test_binding_line_with_the_wrong_names_points_at_it(tmp_path, cache_dir):
    path = tmp_path / "misnamed.h"
    path.write_text(textwrap.dedent("""\
        #include "tessera/tessera.h"
        using namespace tessera;
        inline void k(Ptr<f32> x, Int n, Const<int> BLOCK) {}

        TESSERA_PY_KERNEL(k, x, n);
        """))
    with pytest.raises(tessera.Error, match=r"misnamed\.h:5:\d+: error: kernel 'k' has 3 parameters but 2 names"):
        tessera.load(path)


def test_header_without_kernel_lines(tmp_path):
    path = tmp_path / "empty.h"
    path.write_text('#include "tessera/tessera.h"\n// TESSERA_PY_KERNEL(commented, out);\n')
    with pytest.raises(ValueError, match="declares no kernels: add a TESSERA_PY_KERNEL"):
        tessera.load(path)


def test_missing_header(tmp_path):
    with pytest.raises(FileNotFoundError):
        tessera.load(tmp_path / "nope.h")


# Found by tests/python/fuzz_boundary.py: argument mistakes gave messages that named nothing, or FileNotFoundError.
@pytest.mark.parametrize("kwargs, error, message", [
    ({"header": None}, TypeError, "header must be a path"),
    ({"extra_flags": "-O2"}, TypeError, "extra_flags must be a sequence of str"),
    ({"extra_flags": ["-O2", 3]}, TypeError, "extra_flags must be a sequence of str"),
    ({"compiler": 5}, TypeError, "compiler must be a path"),
])
def test_load_argument_types_are_named(header, kwargs, error, message):
    with pytest.raises(error, match=message):
        tessera.load(**{"header": header, **kwargs})


@pytest.mark.parametrize("compiler, message", [
    ("/no/such/compiler", r"cannot run the compiler '/no/such/compiler'"),
    ("/bin/true", r"failed: /bin/true wrote no module"),
])
def test_a_compiler_that_cannot_build_the_module_is_a_tessera_error(tmp_path, cache_dir, compiler, message):
    path = tmp_path / "fresh.h"  # a header no earlier test compiled, so nothing comes from the cache
    path.write_text(HEADER.replace("out = x * alpha", "a header of its own"))
    with pytest.raises(tessera.Error, match=message):
        tessera.load(path, compiler=compiler)


def _bad_header(tmp_path, kind):
    path = tmp_path / "k.h"
    if kind == "symlink loop":
        path.symlink_to(path)
    elif kind == "fifo":
        import os
        os.mkfifo(path)
    elif kind == "not UTF-8":
        path.write_bytes(HEADER.encode().replace(b"out = x", b"out \xff x"))
    elif kind == "directory":
        return tmp_path
    elif kind == "NUL character":
        return str(path) + "\0.h"
    elif kind == "name too long":
        return tmp_path / ("k" * 5000 + ".h")
    return path


# Found by the boundary fuzzer's load cases (boundary_load.py): a symlink loop raised RuntimeError, a long name
# OSError, a NUL character or a header not in UTF-8 a ValueError naming nothing; a directory or a FIFO was "no such
# header"; an empty compiler name silently meant g++.
@pytest.mark.parametrize("kind, message", [
    ("symlink loop", r"header: cannot use .* as a path: Symlink loop"),
    ("name too long", r"header: cannot use .* as a path: .*File name too long"),
    ("NUL character", r"header: cannot use .* as a path: embedded null"),
    ("directory", r"header: .* is not a regular file"),
    ("fifo", r"header: .*k\.h is not a regular file"),
    ("not UTF-8", r"header: .*k\.h is not UTF-8 text \(invalid start byte at byte \d+\)"),
])
def test_unusable_headers_are_value_errors_naming_the_argument(tmp_path, kind, message):
    with pytest.raises(ValueError, match=message):
        tessera.load(_bad_header(tmp_path, kind))


def test_a_missing_header_is_also_a_value_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match=r"header: no such file: .*nope\.h"):
        tessera.load(tmp_path / "nope.h")


@pytest.mark.parametrize("kwargs, message", [
    ({"compiler": ""}, r"compiler: '' is no command name"),
    ({"compiler": "g++\0"}, r"compiler: .* is no command name"),
    ({"extra_flags": ["-DX\0Y"]}, r"extra_flags: a flag contains a NUL character"),
])
def test_unusable_compilers_and_flags_are_value_errors_naming_them(header, kwargs, message):
    with pytest.raises(ValueError, match=message):
        tessera.load(header, **kwargs)


def test_flags_from_an_iterator_reach_the_compiler(tmp_path, cache_dir, monkeypatch):
    seen = []

    def compiler_that_fails(cmd, **kwargs):
        seen.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "stopped here")
    monkeypatch.setattr(loader.subprocess, "run", compiler_that_fails)
    path = tmp_path / "iterated.h"
    path.write_text(HEADER.replace("out = x * alpha", "flags from an iterator"))
    with pytest.raises(tessera.Error):
        tessera.load(path, extra_flags=iter(["-DFROM_ITERATOR"]))
    assert "-DFROM_ITERATOR" in seen[0]


def test_an_unusable_cache_folder_is_a_tessera_error(tmp_path, monkeypatch):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    monkeypatch.setenv("TESSERA_CACHE_DIR", str(not_a_folder))
    path = tmp_path / "uncached.h"
    path.write_text(HEADER.replace("out = x * alpha", "a header no cache holds"))
    with pytest.raises(tessera.Error, match=r"cannot use the module cache folder .*file/python-modules"):
        tessera.load(path)
