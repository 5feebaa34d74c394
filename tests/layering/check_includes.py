#!/usr/bin/env python3
"""Fails when a library file includes a header of a layer above its own.

The layers (docs/Architecture.md): ir, then transforms, then backends, then jit, then python, with frontend over
ir. Each #include of the library directories is resolved the way the compiler resolves it (next to the file, then
the include roots of the top-level CMakeLists.txt and python/), and the directory it lands in must be one its
layer may use. LLVM headers are allowed only in backends/, jit/ and python/, and a target-neutral interface must
not include the implementations behind it.

    check_includes.py [ROOT]    ROOT: the source tree (default: this file's repository)
"""
import re
import sys
from pathlib import Path

# Layer -> the layers its files may include (its own included).
ALLOWED = {
    "ir": {"ir"},
    "transforms": {"ir", "transforms"},
    "backends": {"ir", "transforms", "backends"},
    "frontend": {"ir", "frontend"},
    "jit": {"ir", "transforms", "backends", "frontend", "jit"},
    "python": {"ir", "transforms", "backends", "frontend", "jit", "python"},
}
# Eager mode evaluates ops with the reference interpreter: frontend sources (never its headers) may include it.
FRONTEND_SOURCES_MAY_INCLUDE = "backends/interpreter/"
LLVM_USERS = {"backends", "jit", "python"}
# Target-neutral interfaces -> the implementation headers they must not include.
NEUTRAL_INTERFACES = {"jit/DeviceRuntime.h": {"jit/CudaDriver.h", "jit/HipRuntime.h"}}
INCLUDE_ROOTS = ["", "frontend", "python/include"]  # the -I directories, relative to the source tree
SOURCE_SUFFIXES = {".h", ".cpp", ".def"}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of(path):
    """The layer of a path relative to the source tree, or None outside the library (tests, tools...)."""
    top = path.parts[0] if path.parts else ""
    return top if top in ALLOWED else None


def resolve(root, including, name, quoted):
    """The included file, relative to root, or None for a system or third-party header."""
    candidates = [including.parent / name] if quoted else []
    candidates += [Path(base) / name for base in INCLUDE_ROOTS]
    for candidate in candidates:
        if (root / candidate).is_file():
            return Path(*(root / candidate).resolve().relative_to(root.resolve()).parts)
    # A project path that does not exist still names its layer (it would not compile either).
    first = Path(name).parts[0]
    return Path(name) if first in ALLOWED or first in ("tutorials", "tests") else None


def violations(root):
    root = Path(root)
    found = []
    for layer in ALLOWED:
        for file in sorted((root / layer).rglob("*")):
            if file.suffix not in SOURCE_SUFFIXES or not file.is_file():
                continue
            rel = file.relative_to(root)
            for number, line in enumerate(file.read_text(errors="replace").splitlines(), 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                quoted, name = match.group(1) == '"', match.group(2)
                where = f"{rel}:{number}: includes {name}"
                if name.startswith(("llvm/", "llvm-c/")):
                    if layer not in LLVM_USERS:
                        found.append(f"{where}: LLVM headers belong to backends/, jit/ and python/ only")
                    continue
                target = resolve(root, rel, name, quoted)
                if target is None:
                    continue
                if target.as_posix() in NEUTRAL_INTERFACES.get(rel.as_posix(), ()):
                    found.append(f"{where}: the target-neutral interface must not include an implementation")
                    continue
                target_layer = layer_of(target)
                if target_layer in ALLOWED[layer]:
                    continue
                if (layer == "frontend" and file.suffix == ".cpp"
                        and target.as_posix().startswith(FRONTEND_SOURCES_MAY_INCLUDE)):
                    continue
                resolved = "" if target.as_posix() == name else f" ({target})"
                found.append(f"{where}{resolved}: {layer}/ must not include {target_layer or target.parts[0]}/ "
                             f"(allowed: {', '.join(sorted(ALLOWED[layer]))})")
    return found


def main(argv):
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    found = violations(root)
    for v in found:
        print(v)
    print(f"check_includes: {len(found)} upward include(s) in {root}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
