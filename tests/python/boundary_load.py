"""tessera.load cases for the boundary fuzzer (fuzz_boundary.py): bad header paths, wrong argument kinds and
corrupted header contents, made from (seed, index) as plain data like boundary_cases.py's, and run and judged in
the worker.

Every case names a compiler that does not exist, so that none spends seconds compiling: what a compiler makes of
a header is test_load.py's business; here load's own checks before it must turn bad input into a clean error.
Allowed outcomes: TypeError/ValueError naming a spoiled argument, or tessera.Error (the missing compiler, for a
header whose text still declares kernels). Success is impossible, and any other exception is a finding.
"""

import os
import random
import tempfile

import tessera

SHARE = 0.05  # of all cases: this many are load cases
ABSENT_COMPILER = "/nonexistent/tessera-fuzz-c++"
HEADER = """#include "tessera/tessera.h"
using namespace tessera;

void twice(Tensor x, Tensor out, Tensor n, Const<int> BLOCK) {
  Tensor offs = program_id(0) * BLOCK + arange(0, BLOCK);
  store(out + offs, load(x + offs, offs < n) * 2, offs < n);
}
TESSERA_PY_KERNEL(twice, x, out, n, BLOCK);
"""
BAD_PATHS = ["missing", "directory", "fifo", "dangling_symlink", "symlink_loop", "nul", "long_name", "empty_name",
             "device", "missing_parent"]
ODD_HEADERS = ["None", "bytes", "int", "list", "object"]
# Contents that keep a binding line reach the (absent) compiler; the others must be rejected before it.
CONTENTS = ["random_bytes", "invalid_utf8", "nul_in_binding", "empty", "no_binding", "mangled_binding",
            "truncated", "binding_only", "intact"]
BAD_FLAGS = [("value", "-O2"), ("odd", "bytes"), ("value", 5), ("value", [1]), ("value", [None]),
             ("value", ["-DX\0Y"])]
BAD_COMPILERS = [("value", 5), ("odd", "bytes"), ("value", ["g++"]), ("value", "g++\0"), ("value", "")]


def is_load_case(seed, index):
    """Whether case (seed, index) is a load case: drawn apart from the launch cases' own stream, so that the
    launch cases of a seed stay what they were before load cases existed."""
    return random.Random(f"tessera-boundary-load/{seed}/{index}").random() < SHARE


def make_case(seed, index):
    rng = random.Random(f"tessera-boundary-load-case/{seed}/{index}")
    case = {"seed": seed, "index": index, "op": "load", "header": ("contents", "intact", b""),
            "extra_flags": ("value", ["-O1"]), "compiler": ("value", ABSENT_COMPILER), "offenders": []}
    for _ in range(rng.choice([1, 1, 2])):
        what = rng.random()
        if what < 0.35:
            case["header"] = ("path", rng.choice(BAD_PATHS), b"")
        elif what < 0.45:
            case["header"] = ("odd", rng.choice(ODD_HEADERS), b"")
        elif what < 0.8:
            kind = rng.choice(CONTENTS)
            case["header"] = ("contents", kind, _corrupted(kind, rng))
        elif what < 0.9:
            case["extra_flags"] = rng.choice(BAD_FLAGS)
            case["offenders"].append("extra_flags")
            continue
        else:
            case["compiler"] = rng.choice(BAD_COMPILERS)
            case["offenders"].append("compiler")
            continue
        if "header" not in case["offenders"]:
            case["offenders"].append("header")
    if case["header"][:2] == ("contents", "intact") and "header" in case["offenders"]:
        case["offenders"].remove("header")
    case["offenders"].sort()
    return case


def _corrupted(kind, rng):
    """The header's bytes for a contents case."""
    text = HEADER.encode()
    if kind == "random_bytes":
        return rng.randbytes(rng.randint(1, 300))
    if kind == "invalid_utf8":
        at = rng.randint(0, len(text))
        return text[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"]) + text[at:]
    if kind == "nul_in_binding":
        at = text.index(b"TESSERA_PY_KERNEL") + rng.randint(0, 30)
        return text[:at] + b"\0" + text[at:]
    if kind == "empty":
        return b""
    if kind == "no_binding":
        return text[:text.index(b"TESSERA_PY_KERNEL")]
    if kind == "mangled_binding":
        return text.replace(b"TESSERA_PY_KERNEL(twice,", b"TESSERA_PY_KERNEL" + rng.choice(
            [b" twice,", b"(,", b"((twice,", b"(3twice-,", b"(twice,,"]))
    if kind == "truncated":
        return text[:rng.randint(0, len(text) - 1)]
    if kind == "binding_only":
        return b"TESSERA_PY_KERNEL(nothing_defined, a, b);\n"
    return text


def _header_argument(spec, folder):
    """The header argument for a case, built in `folder` (the case's own temporary folder)."""
    kind, name, contents = spec
    if kind == "odd":
        return {"None": None, "bytes": b"k.h", "int": 3, "list": ["k.h"], "object": object()}[name]
    path = os.path.join(folder, "k.h")
    if kind == "contents":
        with open(path, "wb") as f:
            f.write(contents)
        return path
    if name == "directory":
        return folder
    if name == "fifo":
        os.mkfifo(path)
        return path
    if name == "dangling_symlink":
        os.symlink(os.path.join(folder, "gone.h"), path)
        return path
    if name == "symlink_loop":
        os.symlink(path, path)
        return path
    return {"missing": path, "nul": path + "\0.h", "long_name": os.path.join(folder, "k" * 5000 + ".h"),
            "empty_name": "", "device": os.devnull, "missing_parent": os.path.join(folder, "no", "k.h")}[name]


def _value(spec):
    kind, value = spec
    return {"bytes": b"g++"}[value] if kind == "odd" else value


def run_case(case):
    """Runs the case; returns (problems, outcome, message)."""
    with tempfile.TemporaryDirectory(prefix="tessera-load-fuzz-") as folder:
        header = _header_argument(case["header"], folder)
        saved = os.environ.get("TESSERA_CACHE_DIR")
        os.environ["TESSERA_CACHE_DIR"] = os.path.join(folder, "cache")  # what load leaves stays in the folder
        try:
            tessera.load(header, extra_flags=_value(case["extra_flags"]), compiler=_value(case["compiler"]))
            outcome, message = "ok", ""
        except tessera.Error as e:
            outcome, message = "tessera.Error", str(e)
        except (TypeError, ValueError) as e:
            outcome, message = ("TypeError" if isinstance(e, TypeError) else "ValueError"), str(e)
        except BaseException as e:  # anything else is a finding
            outcome, message = "unexpected " + type(e).__name__, str(e)
        finally:
            if saved is None:
                os.environ.pop("TESSERA_CACHE_DIR")
            else:
                os.environ["TESSERA_CACHE_DIR"] = saved
    problems = []
    if outcome.startswith("unexpected"):
        problems.append(f"raised {outcome[11:]}: {message}")
    elif outcome == "ok":
        problems.append("succeeded with a compiler that does not exist")
    elif outcome != "tessera.Error" and not any(o in message for o in case["offenders"]):
        problems.append(f"{outcome} names none of {case['offenders']}: {message}")
    return problems, outcome, message


def describe(case):
    return "\n".join(f"  {k}: {case[k]!r}" for k in ("op", "header", "extra_flags", "compiler", "offenders"))
