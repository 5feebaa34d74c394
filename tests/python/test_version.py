"""tessera.__version__ is the project's one version, project(VERSION) in CMakeLists.txt."""

import pathlib
import re

import tessera


def test_version_is_the_cmake_project_version():
    cmake = (pathlib.Path(__file__).resolve().parents[2] / "CMakeLists.txt").read_text()
    match = re.search(r"project\(Tessera VERSION (\d+\.\d+\.\d+)", cmake)
    assert match, "CMakeLists.txt has no project(Tessera VERSION x.y.z)"
    assert tessera.__version__ == match.group(1)
    assert tessera._C.__version__ == tessera.__version__
