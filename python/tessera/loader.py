"""tessera.load: compile a header of DSL kernels into a Python extension on the fly, and cache it."""

import collections.abc
import hashlib
import importlib.util
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from ._C import Error
from .kernel import Kernel

# One binding line per kernel in the user's header: TESSERA_PY_KERNEL(fn, param names...)
_KERNEL_LINE = re.compile(r"^[ \t]*TESSERA_PY_KERNEL\(\s*([\w:]+)\s*((?:,\s*\w+\s*)*)\)", re.M)
_loaded = {}


class LoadedKernels:
    """The kernels of one header, as attributes."""

    def __init__(self, module):
        self._names = []
        for name in dir(module):
            if not name.startswith("_"):
                setattr(self, name, Kernel(getattr(module, name)))
                self._names.append(name)

    def __repr__(self):
        return f"<tessera kernels {', '.join(self._names)}>"


def _package_dir():
    return pathlib.Path(__file__).resolve().parent


def _include_dir():
    """The headers the package ships (the DSL, the IR, tessera/python.h), in the build tree or installed."""
    path = _package_dir() / "include"
    if not (path / "tessera" / "python.h").is_file():
        raise Error(f"tessera.load needs the Tessera headers, but {path} has no tessera/python.h")
    return path


def _cache_dir():
    base = os.environ.get("TESSERA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "tessera")
    path = pathlib.Path(base) / "python-modules"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise Error(f"tessera.load: cannot use the module cache folder {path} (TESSERA_CACHE_DIR): {e}") from e
    return path


def _pybind11_include():
    """pybind11's headers when pip installed them (Debian's are on the compiler's default path)."""
    try:
        import pybind11
    except ImportError:
        return []
    return [f"-I{pybind11.get_include()}"]


def _c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _declared_kernels(text):
    """[(function, parameter names, line)] for each TESSERA_PY_KERNEL line of a header."""
    return [(m.group(1), [p.strip() for p in m.group(2).split(",") if p.strip()], text.count("\n", 0, m.start()) + 1)
            for m in _KERNEL_LINE.finditer(text)]


def _binding_source(module_name, header, kernels):
    # Each binding line is attributed (#line) to its TESSERA_PY_KERNEL line, so compiler errors and
    # tessera::kernel()'s own checks (e.g. a wrong number of names) point into the user's header.
    lines = [f"#include {_c_string(str(header))}", '#include "tessera/python.h"', "",
             f"PYBIND11_MODULE({module_name}, m) {{"]
    for fn, params, line in kernels:
        names = ", ".join(f'"{p}"' for p in params)
        py_name = fn.split("::")[-1]
        lines.append(f"#line {line} {_c_string(str(header))}")
        lines.append(f'  tessera::python::bind(m, tessera::kernel("{py_name}", {fn}, {{{names}}}));')
    lines.append("}")
    return "\n".join(lines) + "\n"


class _MissingHeader(FileNotFoundError, ValueError):
    """No file at tessera.load's header path: a FileNotFoundError, and a ValueError naming the argument like every
    other unusable header."""


def _read_header(header):
    """(the header's resolved path, its text), or TypeError / ValueError naming `header`."""
    if not isinstance(header, (str, os.PathLike)):
        raise TypeError(f"header must be a path (str or os.PathLike), got {type(header).__name__}")
    try:
        path = pathlib.Path(header).resolve()
        is_file = path.is_file()
        exists = is_file or path.exists()
    except (OSError, RuntimeError, ValueError) as e:  # a name too long, a symlink loop, a NUL character
        raise ValueError(f"header: cannot use {header!r} as a path: {e}") from e
    if not exists:
        raise _MissingHeader(f"header: no such file: {path}")
    if not is_file:
        raise ValueError(f"header: {path} is not a regular file")
    try:
        return path, path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"header: {path} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise ValueError(f"header: cannot read {path}: {e.strerror or e}") from e


def _flag_list(extra_flags):
    """extra_flags as a list of str, or TypeError / ValueError naming the argument."""
    if isinstance(extra_flags, (str, bytes)) or not isinstance(extra_flags, collections.abc.Iterable):
        raise TypeError(f"extra_flags must be a sequence of str (one flag each), got {extra_flags!r}")
    flags = list(extra_flags)  # once: an iterator would be empty after the checks
    if not all(isinstance(f, str) for f in flags):
        raise TypeError(f"extra_flags must be a sequence of str (one flag each), got {flags!r}")
    if any("\0" in f for f in flags):
        raise ValueError(f"extra_flags: a flag contains a NUL character: {flags!r}")
    return flags


def load(header, extra_flags=(), compiler=None, verbose=False):
    """Compiles the kernels declared in a C++ header into an extension module; returns them by name.

    After each kernel function, the header binds it with one line naming its parameters in order:

        TESSERA_PY_KERNEL(scale, x, out, n, alpha, BLOCK);

    The extension is cached (TESSERA_CACHE_DIR, default ~/.cache/tessera) by the header's path and text, the
    flags, the compiler and the Tessera build, so later calls only import it. Headers it includes are not part
    of the key: after changing one, touch the header or clear the cache. Compile errors, and binding lines
    whose names don't match the kernel, raise tessera.Error pointing into the header. A header path that names
    no readable UTF-8 file raises ValueError naming `header` (missing: also a FileNotFoundError).
    """
    header, text = _read_header(header)
    extra_flags = _flag_list(extra_flags)
    if compiler is not None:
        if not isinstance(compiler, (str, os.PathLike)):
            raise TypeError(f"compiler must be a path or a command name, got {type(compiler).__name__}")
        if not os.fsdecode(compiler) or "\0" in os.fsdecode(compiler):
            raise ValueError(f"compiler: {compiler!r} is no command name (empty, or with a NUL character)")
    kernels = _declared_kernels(text)
    if not kernels:
        raise ValueError(f"header: {header} declares no kernels: add a TESSERA_PY_KERNEL(name, params...) line per "
                         "kernel")
    compiler = compiler or os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not compiler:
        raise Error("tessera.load needs a C++20 compiler (g++); set CXX")
    core = _package_dir() / "libtessera.so"
    key_material = "\0".join([str(header), text, " ".join(extra_flags), compiler, str(core.stat().st_mtime_ns),
                              sys.version])
    module_name = "tessera_user_" + hashlib.sha256(key_material.encode()).hexdigest()[:16]
    if module_name in _loaded:
        return _loaded[module_name]

    out_dir = _cache_dir()
    target = out_dir / (module_name + sysconfig.get_config_var("EXT_SUFFIX"))
    if not target.exists():
        include = _include_dir()
        # Per-process scratch names: concurrent loads of one header never write the same file.
        source = out_dir / f"{module_name}.{os.getpid()}.cpp"
        source.write_text(_binding_source(module_name, header, kernels))
        tmp = out_dir / f"{module_name}.{os.getpid()}.tmp"
        cmd = [compiler, "-std=c++20", "-O1", "-shared", "-fPIC", "-fvisibility=hidden",
               f"-I{include}",
               f"-I{sysconfig.get_paths()['include']}", *_pybind11_include(), f"-I{header.parent}", str(source),
               "-o", str(tmp),
               f"-L{_package_dir()}", "-ltessera", f"-Wl,-rpath,{_package_dir()}", *extra_flags]
        if verbose:
            print(" ".join(cmd), file=sys.stderr)
        try:
            result = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise Error(f"tessera.load: cannot run the compiler {compiler!r}: {e}") from e
        if result.returncode != 0 or not tmp.is_file():  # the generated source stays for the messages to point at
            tmp.unlink(missing_ok=True)
            why = f"exited with status {result.returncode}" if result.returncode else "wrote no module"
            raise Error(f"tessera.load: compiling {header.name} failed: {compiler} {why}\n{result.stderr}")
        source.unlink()
        os.replace(tmp, target)  # atomic: a concurrent load never imports a half-written module
    spec = importlib.util.spec_from_file_location(module_name, target)
    try:
        module = importlib.util.module_from_spec(spec)  # runs the extension's init, which binds the kernels
        spec.loader.exec_module(module)
    except ImportError as e:  # the module's init threw: e.g. a TESSERA_PY_KERNEL line with the wrong names
        raise Error(f"tessera.load: loading the kernels of {header.name} failed: {e}") from e
    _loaded[module_name] = LoadedKernels(module)
    return _loaded[module_name]
