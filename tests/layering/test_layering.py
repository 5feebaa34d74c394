"""The include layering check (check_includes.py): the source tree passes it, and it reports each kind of upward
include it exists to catch."""
import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("check_includes", HERE / "check_includes.py")
check_includes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_includes)


def test_the_source_tree_has_no_upward_include():
    found = check_includes.violations(HERE.parents[1])
    assert not found, "\n".join(found)


def write_tree(root, files):
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


# A minimal tree with one header per layer, so that includes resolve as in the real tree.
HEADERS = {
    "ir/IR.h": "",
    "transforms/PassManager.h": '#include "ir/IR.h"\n',
    "backends/interpreter/Interpreter.h": '#include "ir/IR.h"\n#include "transforms/PassManager.h"\n',
    "frontend/tessera/Tensor.h": '#include "ir/IR.h"\n',
    "jit/JitKernel.h": '#include "tessera/Tensor.h"\n#include "backends/interpreter/Interpreter.h"\n',
    "python/include/tessera/python.h": '#include "jit/JitKernel.h"\n',
    "tutorials/kernels/k.h": '#include "tessera/Tensor.h"\n',
    "tests/gpucheck/Cases.h": '#include "jit/JitKernel.h"\n',
}


def test_a_tree_that_points_one_way_passes(tmp_path):
    write_tree(tmp_path, HEADERS | {
        "frontend/tessera/Eager.cpp": '#include "backends/interpreter/Interpreter.h"\n',
        "backends/nvptx/Target.cpp": "#include <llvm/IR/Module.h>\n",
        "python/src/bindings.cpp": '#include "tessera/python.h"\n',
        "jit/Commented.h": '// #include "tutorials/kernels/k.h"\n',
    })
    assert check_includes.violations(tmp_path) == []


@pytest.mark.parametrize("path, include, rule", [
    ("ir/Bad.h", "transforms/PassManager.h", "ir/ must not include transforms/"),
    ("ir/Bad.cpp", "tessera/Tensor.h", "ir/ must not include frontend/"),
    ("transforms/Bad.cpp", "backends/interpreter/Interpreter.h", "transforms/ must not include backends/"),
    ("backends/common/Bad.h", "jit/JitKernel.h", "backends/ must not include jit/"),
    ("backends/interpreter/Bad.cpp", "tessera/Tensor.h", "backends/ must not include frontend/"),
    ("frontend/tessera/Bad.h", "backends/interpreter/Interpreter.h", "frontend/ must not include backends/"),
    ("frontend/tessera/Bad.cpp", "transforms/PassManager.h", "frontend/ must not include transforms/"),
    ("frontend/tessera/Bad.cpp", "jit/JitKernel.h", "frontend/ must not include jit/"),
    ("jit/Bad.h", "tessera/python.h", "jit/ must not include python/"),
    ("jit/Bad.cpp", "tutorials/kernels/k.h", "jit/ must not include tutorials/"),
    ("jit/Bad.h", "tests/gpucheck/Cases.h", "jit/ must not include tests/"),
    ("python/src/Bad.cpp", "tutorials/kernels/k.h", "python/ must not include tutorials/"),
])
def test_an_upward_include_is_reported(tmp_path, path, include, rule):
    write_tree(tmp_path, HEADERS | {path: f'#include <vector>\n\n#include "{include}"\n'})
    found = check_includes.violations(tmp_path)
    assert len(found) == 1, found
    assert found[0].startswith(f"{path}:3: includes {include}") and rule in found[0], found[0]


@pytest.mark.parametrize("path", ["ir/Bad.cpp", "transforms/Bad.h", "frontend/tessera/Bad.h"])
def test_llvm_headers_outside_the_backends_and_the_jit_are_reported(tmp_path, path):
    write_tree(tmp_path, HEADERS | {path: "#include <llvm/IR/Module.h>\n"})
    found = check_includes.violations(tmp_path)
    assert len(found) == 1 and "LLVM headers" in found[0], found


def test_the_device_runtime_interface_must_not_include_its_implementations(tmp_path):
    write_tree(tmp_path, HEADERS | {"jit/CudaDriver.h": "", "jit/DeviceRuntime.h": '#include "jit/CudaDriver.h"\n'})
    found = check_includes.violations(tmp_path)
    assert len(found) == 1 and "jit/DeviceRuntime.h" in found[0], found
