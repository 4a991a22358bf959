// From OpenCL C source to count and trace programs: compile with clang-15 for spir64, prepare,
// instrument, serialise. Used by `cltrace instrument`, the wrapper and the tests.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cltrace/passes/instrument.h"

namespace cltrace::passes {

// Compilation or instrumentation failed; what() carries clang's diagnostics where relevant.
class InstrumentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct KernelArg {
  std::string name;          // from kernel_arg_name ("argN" when absent)
  std::string type;          // kernel_arg_type, e.g. "float*"; a typedef's name as written
  unsigned addressSpace = 0; // of the pointee for pointers (1 global, 2 constant, 3 local), else 0
  bool isPointer = false;
  uint64_t byValueBytes = 0;  // a struct passed by value: its size (isPointer is then false)
  // An image (read_only or write_only) or a sampler: a handle the host binds a cl_mem image or a
  // cl_sampler to, read and written through the OpenCL library (texture path), not traced.
  // isPointer is then false.
  enum class Handle { None, Image, Sampler } handle = Handle::None;
  bool writeOnly = false;  // an image declared write_only (else read_only)
  // kernel_arg_base_type: typedefs of built-in types resolved (`DATA_TYPE*` -> "float*"); empty:
  // as `type`.
  std::string baseType = {};
  const std::string& resolvedType() const { return baseType.empty() ? type : baseType; }
};

struct InstrumentedKernel {
  std::string kernel;
  std::string countBitcode;  // SPIR bitcode (spir64, LLVM 15)
  std::string traceBitcode;
  std::vector<KernelArg> args;  // the original parameters
  KernelReport report;  // the trace pass's, with the count pass's countRunWritesBuffers
  uint64_t sourceHash = 0;  // FNV-1a 64 of the source text (and of embedded headers' names and texts)
};

// A header a program embeds (clCompileProgram's input headers): the name its sources include
// it by (`#include "name"`, may contain directories) and its text.
struct EmbeddedHeader {
  std::string name;
  std::string text;
};

// Compiles OpenCL C 1.2 `source` (options as for clBuildProgram: -D, -I, -cl-*; -O options are
// left out, the passes need the -O0 code), returning
// the bitcode clang produced; `headers` can be included by their names, before any -I
// directory. Throws InstrumentError with clang's diagnostics, or naming a header whose name
// is empty, absolute or climbs out with "..". The diagnostics call the source `sourceName`
// (the user's file; "kernel.cl" when empty) and the embedded headers by their names, rather
// than the temporary copies clang compiled.
std::string compileOpenCL(const std::string& source, const std::vector<std::string>& options,
                          const std::vector<EmbeddedHeader>& headers = {}, const std::string& sourceName = {});

// Names of the kernels in a compiled program.
std::vector<std::string> listKernels(const std::string& bitcode);

// Instruments `kernel` of the compiled `bitcode`. Throws InstrumentError (an unknown kernel
// name lists the kernels there are).
InstrumentedKernel instrumentBitcode(const std::string& bitcode, const std::string& kernel);

// compileOpenCL of `source` as instrumentSource compiles it (with the definitions cltrace gives
// builtins the passes cannot see into, such as the asynchronous work-group copies). A program's
// units compiled so can be linked with linkBitcode.
std::string compileProgramSource(const std::string& source, const std::vector<std::string>& options,
                                 const std::vector<EmbeddedHeader>& headers = {}, const std::string& sourceName = {});
// Links separately compiled units into one module, as clLinkProgram does: each unit keeps its
// own macros and static functions. Throws InstrumentError naming what clashes.
std::string linkBitcode(const std::vector<std::string>& units);
// FNV-1a 64 of a source and its embedded headers (InstrumentedKernel::sourceHash).
uint64_t sourceHashOf(const std::string& source, const std::vector<EmbeddedHeader>& headers = {});
// compileProgramSource + instrumentBitcode. The source hash covers the embedded headers too.
InstrumentedKernel instrumentSource(const std::string& source, const std::string& kernel,
                                    const std::vector<std::string>& options,
                                    const std::vector<EmbeddedHeader>& headers = {},
                                    const std::string& sourceName = {});

// Readable IR of a bitcode string.
std::string bitcodeToText(const std::string& bitcode);

// `bitcode` made ready for llvm-spirv-15:
// - every llvm.fmuladd (clang's a * b + c under OpenCL C's default FP_CONTRACT ON) becomes an
//   llvm.fma. llvm-spirv turns fmuladd into OpenCL's mad or a separate multiply and add, which
//   a driver's IL path computes unfused, while its source path fuses them on hardware with FMA
//   (GPUs since Fermi, this CPU): an address computed from such an expression would differ
//   between the trace and the program.
// - work-item functions asked about a constant dimension past 2 get OpenCL's answer (0 for ids
//   and offsets, 1 for sizes and counts): llvm-spirv-15 would read the builtin vector out of
//   bounds, which makes the module invalid.
// - llvm.bitreverse (clang's __builtin_bitreverse8/16/32/64), which llvm-spirv-15 cannot write,
//   becomes shifts and masks.
// - as in poclReady, builtins called with a generic pointer cast from a named space call that
//   space's overload.
std::string spirvReady(const std::string& bitcode);

// `bitcode` made ready for PoCL's SPIR path: calls to OpenCL's half_* math builtins (half_sqrt,
// half_exp, ...) go to the _cl_half_* functions of PoCL's kernel library. PoCL's own source
// compile renames them so (its _builtin_renames.h), and its library has no function under the
// standard name, so a SPIR module calling them would not link; with the rename the traced
// kernel computes exactly what PoCL computes for the program's own kernel. And OpenCL C 2.0's
// generic-pointer overloads of builtins (vload4 of a private array, sincos's out-parameter),
// which PoCL's library lacks, give way to the overload of the space the pointer was cast from
// (_Z6vload4mPU3AS4Kf -> _Z6vload4mPKf), where the builtin has one pointer parameter.
std::string poclReady(const std::string& bitcode);

// `options` with the directory of the source file at `path` searched first for #include "...",
// as when a compiler is given the file itself (cltrace compiles a copy of it elsewhere).
std::vector<std::string> withSourceDirectory(const std::string& path, std::vector<std::string> options);
// Splits a clBuildProgram option string into words (honours simple quotes).
std::vector<std::string> splitOptions(const std::string& options);

}  // namespace cltrace::passes
