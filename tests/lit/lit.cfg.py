# lit configuration for Tessera's FileCheck tests (textual IR through tessera-opt, PTX, ...).
import os
import lit.formats

config.name = "Tessera"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.tessera_tools_dir), "tests", "lit-out")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in"]

config.substitutions.append(("%tessera-opt", os.path.join(config.tessera_tools_dir, "tessera-opt")))
config.substitutions.append(("%tessera-translate", os.path.join(config.tessera_tools_dir, "tessera-translate")))
config.substitutions.append(("FileCheck", config.filecheck))
