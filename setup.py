"""Build the native extensions.

Every ``kcodec/**/_*.pyx`` becomes one extension module, named from its path
(``kcodec/log/_records.pyx`` -> ``kcodec.log._records``); all plain-C kernels in ``csrc/``
(which include no Python headers) are compiled once into a static library they link.

Switches (environment):
  KCODEC_SANITIZE=1   build with AddressSanitizer + UBSan (-O1 -g)
  KCODEC_DEBUG=1      build with -O0 -g
"""
import glob
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildExt(build_ext):
    """Build the C kernels' static library first, also for ``build_ext --inplace``."""

    def run(self):
        if self.distribution.has_c_libraries():
            self.run_command("build_clib")
        super().run()

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = sorted(glob.glob("csrc/*.c"))

cflags = ["-std=c99", "-Wall", "-Wextra", "-Wno-unused-function"]
ldflags = []
if os.environ.get("KCODEC_SANITIZE"):
    cflags += ["-O1", "-g", "-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    ldflags += ["-fsanitize=address,undefined"]
elif os.environ.get("KCODEC_DEBUG"):
    cflags += ["-O0", "-g"]
else:
    cflags += ["-O3"]

# The C kernels are compiled once into a static library that every extension links.
libraries = [("kcodec_c", {"sources": CSRC, "include_dirs": ["csrc"], "cflags": cflags})] if CSRC else []

ext_modules = []
for pyx in sorted(glob.glob("kcodec/**/_*.pyx", recursive=True)):
    mod = os.path.splitext(pyx)[0].replace(os.sep, ".").replace("/", ".")
    ext_modules.append(
        Extension(
            mod,
            sources=[pyx],
            depends=CSRC + sorted(glob.glob("csrc/*.h")),
            include_dirs=["csrc"],
            extra_compile_args=cflags,
            extra_link_args=ldflags,
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        )
    )

if ext_modules:
    from Cython.Build import cythonize

    ext_modules = cythonize(
        ext_modules,
        language_level=3,
        compiler_directives={"boundscheck": False, "wraparound": False, "cdivision": True},
    )

setup(ext_modules=ext_modules, libraries=libraries, cmdclass={"build_ext": BuildExt})
