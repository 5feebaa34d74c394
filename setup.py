"""Builds the `tessera` Python package with CMake (see pyproject.toml).

The extension, libtessera.so, the Python files and the headers tessera.load compiles against all come from the
CMake build of target _C, in build-pip/ next to this file (TESSERA_PIP_BUILD_DIR elsewhere): at the same depth as
./build, so ccache (base_dir=/) reuses what a ./build of the same sources compiled. TESSERA_JOBS limits
parallelism. The version is project(VERSION) in CMakeLists.txt.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    match = re.search(r"project\(Tessera VERSION (\d+\.\d+\.\d+)", (ROOT / "CMakeLists.txt").read_text())
    if not match:
        sys.exit("setup.py: CMakeLists.txt has no project(Tessera VERSION x.y.z)")
    return match.group(1)


class CMakeBuild(build_ext):
    """Builds target _C with CMake and copies the package CMake assembled into the wheel's tessera/."""

    def build_extension(self, ext):
        build = pathlib.Path(os.environ.get("TESSERA_PIP_BUILD_DIR", ROOT / "build-pip")).resolve()
        # The flags of scripts/configure.sh, so the compiler cache serves both builds.
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                        f"-DPython_EXECUTABLE={sys.executable}", "-DBUILD_TESTING=OFF"], check=True)
        jobs = ["-j", os.environ["TESSERA_JOBS"]] if os.environ.get("TESSERA_JOBS") else []
        subprocess.run(["cmake", "--build", str(build), "--target", "_C", *jobs], check=True)
        package = pathlib.Path(self.get_ext_fullpath(ext.name)).parent
        shutil.copytree(build / "python" / "tessera", package, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
        for library in package.glob("*.so"):  # debug information would make the wheel ten times larger
            subprocess.run(["strip", "--strip-debug", str(library)], check=True)


setup(
    version=project_version(),
    packages=["tessera"],
    package_dir={"tessera": "python/tessera"},
    ext_modules=[Extension("tessera._C", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip/setuptools"}},  # not ./build, which is CMake's
    zip_safe=False,
)
