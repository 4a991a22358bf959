import lit.formats

config.name = "cltrace-passes"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".cl", ".ll"]
config.excludes = ["lit.cfg.py"]
# %clang-spir: compile OpenCL C as cltrace does; %instrument: opt with the plugin.
config.substitutions.append(("%clang-spir",
    config.clang + " -cl-std=CL1.2 -target spir64 -O1 -Xclang -disable-llvm-passes -Xclang -disable-lifetime-markers -funroll-loops -emit-llvm "
    "-cl-kernel-arg-info -c"))
config.substitutions.append(("%opt", config.opt + " -load-pass-plugin=" + config.plugin))
config.substitutions.append(("FileCheck", config.filecheck))
config.substitutions.append(("not ", config.llvm_tools + "/not "))
