#include "cltrace/passes/instrumenter.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/printable.h"
#include "cltrace/trace_file.h"

#ifndef CLTRACE_CLANG_PATH
#define CLTRACE_CLANG_PATH "clang-15"
#endif

using namespace llvm;
namespace fs = std::filesystem;

namespace cltrace::passes {

namespace {

// A private temporary directory removed when it goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "cltrace-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw InstrumentError("cannot create a temporary directory");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) throw InstrumentError("cannot write " + p.string());
}

// Runs argv with stdout and stderr sent to `logPath`; returns the exit status.
int runProcess(const std::vector<std::string>& argv, const fs::path& logPath) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw InstrumentError("cannot start " + argv[0]);
  if (pid == 0) {
    FILE* log = std::fopen(logPath.c_str(), "w");
    if (log) {
      dup2(fileno(log), 1);
      dup2(fileno(log), 2);
    }
    execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s\n", args[0]);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw InstrumentError("waiting for " + argv[0] + " failed");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

std::unique_ptr<Module> parseBitcode(const std::string& bitcode, LLVMContext& ctx) {
  auto buffer = MemoryBuffer::getMemBuffer(bitcode, "kernel.bc", false);
  Expected<std::unique_ptr<Module>> m = parseBitcodeFile(buffer->getMemBufferRef(), ctx);
  if (!m) throw InstrumentError("cannot read bitcode: " + toString(m.takeError()));
  return std::move(*m);
}

std::string toBitcode(const Module& m) {
  std::string out;
  raw_string_ostream os(out);
  WriteBitcodeToFile(m, os);
  os.flush();
  return out;
}

std::string metadataString(const Function& f, StringRef kind, unsigned i) {
  if (MDNode* md = f.getMetadata(kind))
    if (i < md->getNumOperands())
      if (auto* s = dyn_cast_or_null<MDString>(md->getOperand(i))) return s->getString().str();
  return {};
}

// Argument types cltrace cannot bind: their accesses go through the OpenCL library, and a
// launch cannot be run twice (count run, trace run) with them as it can with images.
bool isUnsupportedObjectType(StringRef type) {
  return type == "event_t" || type == "queue_t" || type == "clk_event_t" || type.startswith("pipe");
}

// clang's base type names a vector as its element with an attribute: "float
// __attribute__((ext_vector_type(4)))*" -> "float4*", as OpenCL C writes it.
std::string vectorTypeNames(std::string type) {
  const std::string attribute = " __attribute__((ext_vector_type(";
  for (size_t at; (at = type.find(attribute)) != std::string::npos;) {
    const size_t lanes = at + attribute.size();
    const size_t close = type.find(")))", lanes);
    if (close == std::string::npos) break;
    type = type.substr(0, at) + type.substr(lanes, close - lanes) + type.substr(close + 3);
  }
  return type;
}

std::vector<KernelArg> kernelArgs(const Function& f) {
  std::vector<KernelArg> args;
  for (const Argument& a : f.args()) {
    KernelArg k;
    unsigned i = a.getArgNo();
    k.name = metadataString(f, "kernel_arg_name", i);
    if (k.name.empty()) k.name = a.hasName() ? a.getName().str() : "arg" + std::to_string(i);
    k.type = metadataString(f, "kernel_arg_type", i);
    k.baseType = vectorTypeNames(metadataString(f, "kernel_arg_base_type", i));
    const std::string where = "argument " + std::to_string(i) + " (" + k.type + " " + k.name + ") of kernel '" +
                              f.getName().str() + "'";
    const StringRef object = openclObjectOf(a.getType());
    // (A pipe's kernel_arg_type is its element type; its qualifier says "pipe".)
    const bool pipe = object.startswith("pipe") || StringRef(k.type).startswith("pipe") ||
                      StringRef(metadataString(f, "kernel_arg_type_qual", i)).contains("pipe");
    if (pipe || isUnsupportedObjectType(k.type) || object.endswith("event_t") || object == "queue_t")
      throw InstrumentError(where + " is " +
                            (pipe ? "a pipe" : object == "queue_t" || k.type == "queue_t" ? "a queue" : "an event") +
                            ": cltrace traces buffer accesses and does not support pipe, event or queue arguments");
    if (object.startswith("image") || StringRef(k.type).startswith("image")) {
      // The count run and the trace run both run the kernel: an image it reads and writes would
      // give the trace run other values than the program's launch saw. (Buffers are restored.)
      const std::string access = metadataString(f, "kernel_arg_access_qual", i);
      if (access == "read_write")
        throw InstrumentError(where + " is a read_write image: cltrace runs a launch twice (count and trace "
                                      "runs) and restores buffers, not images; declare it read_only or "
                                      "write_only, or use a buffer");
      k.handle = KernelArg::Handle::Image;
      k.writeOnly = access == "write_only";
      args.push_back(std::move(k));
      continue;
    }
    if (k.type == "sampler_t" || object == "sampler_t") {
      k.handle = KernelArg::Handle::Sampler;
      args.push_back(std::move(k));
      continue;
    }
    if (a.hasByValAttr()) {
      k.byValueBytes = f.getParent()->getDataLayout().getTypeAllocSize(a.getParamByValType());
    } else if (auto* pt = dyn_cast<PointerType>(a.getType())) {
      k.isPointer = true;
      k.addressSpace = pt->getAddressSpace();
    }
    args.push_back(std::move(k));
  }
  return args;
}

// Calls PoCL's SPIR path gets wrong (seen with PoCL 3.1): a builtin taking or returning a
// double16 by value computes garbage there, so the traced launch would change the kernel's
// results.
bool passesDouble16(const Function& f) {
  auto isDouble16 = [](Type* t) {
    auto* v = dyn_cast<FixedVectorType>(t);
    return v && v->getNumElements() == 16 && v->getElementType()->isDoubleTy();
  };
  if (isDouble16(f.getReturnType())) return true;
  for (Type* t : f.getFunctionType()->params())
    if (isDouble16(t)) return true;
  return false;
}

// Refuses calls a traced launch cannot run faithfully: builtins that read or write global
// memory inside the OpenCL library, where the passes cannot see the accesses (a trace would
// silently miss them), and calls passing a double16 (above).
void rejectHiddenAccesses(const Function& kernel) {
  for (const BasicBlock& bb : kernel)
    for (const Instruction& inst : bb) {
      const auto* call = dyn_cast<CallBase>(&inst);
      const Function* callee = call ? call->getCalledFunction() : nullptr;
      if (!callee) continue;
      const std::string stem = demangledStem(callee->getName()).str();
      if (callee->isDeclaration() && passesDouble16(*callee))
        throw InstrumentError("kernel '" + kernel.getName().str() + "' calls " + stem +
                              " with a double16 argument or result, which PoCL's SPIR path (through which cltrace runs "
                              "kernels) computes wrongly: a traced launch would change the results");
      // (Reached only when the calls come from an #included file: the source itself gets the
      // prelude that defines them.)
      if (StringRef(stem).startswith("async_work_group") || stem == "wait_group_events")
        throw InstrumentError("kernel '" + kernel.getName().str() + "' calls " + stem +
                              ", whose memory accesses happen inside the OpenCL library where cltrace "
                              "cannot record them; rewrite it with plain loads and stores to trace it");
    }
}

// Only the traced kernel is needed on the device; the others would be built for nothing (and
// could fail where it does not).
void keepOnlyKernel(Module& m, const Function& kernel) {
  for (Function& f : make_early_inc_range(m))
    if (&f != &kernel && isKernel(f) && f.use_empty()) f.eraseFromParent();
}

// Replaces a call to an OpenCL 1.x atomic builtin (atomic_X or the extensions' atom_X, any
// width, global or local) by the LLVM atomic instruction it stands for, for the forms PoCL's
// SPIR library lacks (most 64-bit ones). Unknown names are left alone.
void lowerAtomicBuiltin(CallInst* call) {
  StringRef name = call->getCalledFunction()->getName();
  StringRef op(demangledStem(name));
  if (!op.consume_front("atomic_")) op.consume_front("atom_");
  if (call->arg_size() < 1 || !call->getArgOperand(0)->getType()->isPointerTy()) return;
  // The operand type's mangling ends the name: i int, j uint, l long, m ulong, f float.
  const char type = name.back();
  const bool isSigned = type == 'i' || type == 'l';
  IRBuilder<> b(call);
  Value* p = call->getArgOperand(0);
  Type* valueType = call->getType();
  const auto order = AtomicOrdering::SequentiallyConsistent;
  Value* result = nullptr;
  auto rmw = [&](AtomicRMWInst::BinOp binop, Value* v) {
    return b.CreateAtomicRMW(binop, p, v, MaybeAlign(), order);
  };
  if (op == "cmpxchg" && call->arg_size() == 3) {
    result = b.CreateExtractValue(
        b.CreateAtomicCmpXchg(p, call->getArgOperand(1), call->getArgOperand(2), MaybeAlign(), order, order), 0);
  } else if ((op == "inc" || op == "dec") && call->arg_size() == 1) {
    result = rmw(op == "inc" ? AtomicRMWInst::Add : AtomicRMWInst::Sub, ConstantInt::get(valueType, 1));
  } else if (call->arg_size() == 2) {
    Value* v = call->getArgOperand(1);
    if (op == "add") result = rmw(AtomicRMWInst::Add, v);
    else if (op == "sub") result = rmw(AtomicRMWInst::Sub, v);
    else if (op == "xchg") result = rmw(AtomicRMWInst::Xchg, v);
    else if (op == "and") result = rmw(AtomicRMWInst::And, v);
    else if (op == "or") result = rmw(AtomicRMWInst::Or, v);
    else if (op == "xor") result = rmw(AtomicRMWInst::Xor, v);
    else if (op == "min") result = rmw(isSigned ? AtomicRMWInst::Min : AtomicRMWInst::UMin, v);
    else if (op == "max") result = rmw(isSigned ? AtomicRMWInst::Max : AtomicRMWInst::UMax, v);
  }
  if (!result) return;  // the verifier catches a type that does not match
  call->replaceAllUsesWith(result);
  call->eraseFromParent();
}

// PoCL's SPIR library lacks mem_fence/read_mem_fence/write_mem_fence and the atom_* names of
// the 32- and 64-bit atomics extensions. After instrumentation (which records them by name),
// fences become LLVM fence instructions and atom_X calls atomic_X or atomic instructions.
void useLoadableBuiltins(Module& m) {
  std::vector<CallInst*> fences;
  for (Function& f : m) {
    if (!f.isDeclaration()) continue;
    const StringRef stem = demangledStem(f.getName());
    if (stem == "mem_fence" || stem == "read_mem_fence" || stem == "write_mem_fence") {
      for (User* u : f.users())
        if (auto* call = dyn_cast<CallInst>(u)) fences.push_back(call);
    }
  }
  for (CallInst* call : fences) {
    new FenceInst(call->getContext(), AtomicOrdering::SequentiallyConsistent, SyncScope::System, call);
    call->eraseFromParent();
  }
  // atom_X becomes a call of atomic_X where the library has it (every 32-bit form, 64-bit add
  // and xchg in PoCL); the other 64-bit forms become LLVM atomic instructions (which not every
  // implementation runs: Oclgrind does not, so calls are kept where they work).
  std::vector<CallInst*> lowered;
  for (Function& f : make_early_inc_range(m)) {
    if (!f.isDeclaration()) continue;
    const std::string stem = demangledStem(f.getName()).str();
    if (!StringRef(stem).startswith("atom_")) continue;
    const char type = f.getName().back();
    const bool wide = type == 'l' || type == 'm';
    if (wide && stem != "atom_add" && stem != "atom_xchg") {
      for (User* u : f.users())
        if (auto* call = dyn_cast<CallInst>(u)) lowered.push_back(call);
      continue;
    }
    StringRef tail = f.getName().drop_front(2 + std::to_string(stem.size()).size() + stem.size());
    std::string renamed = "atomic_" + stem.substr(5);
    std::string name = "_Z" + std::to_string(renamed.size()) + renamed + tail.str();
    FunctionCallee target = m.getOrInsertFunction(name, f.getFunctionType(), f.getAttributes());
    if (auto* g = dyn_cast<Function>(target.getCallee())) g->setCallingConv(f.getCallingConv());
    f.replaceAllUsesWith(target.getCallee());
    f.eraseFromParent();
  }
  for (CallInst* call : lowered) lowerAtomicBuiltin(call);
  for (Function& f : make_early_inc_range(m))
    if (f.isDeclaration() && f.use_empty() && !f.isIntrinsic()) f.eraseFromParent();
}

void verify(const Module& m, const char* what) {
  std::string problems;
  raw_string_ostream os(problems);
  if (verifyModule(m, &os))
    throw InstrumentError(std::string("internal error: the ") + what +
                          " module does not verify:\n" + os.str());
}

// Whether clang's `log` says a name OpenCL C 2.0/3.0 declares is unknown (undeclared, implicitly
// declared or an unknown type): the hint about -cl-std is for those, not for a typo or #error.
bool namesOpenCL20Feature(const std::string& log) {
  // Names beginning so are 2.0/3.0 only; OpenCL C 1.2's own atomic_add, atomic_inc, ... are not,
  // so the 2.0 atomics are listed by what follows "atomic_".
  static const char* const kPrefixes[] = {
      "get_global_linear_id", "get_local_linear_id", "get_enqueued_local_size", "work_group_", "sub_group_",
      "get_sub_group_", "get_max_sub_group_size", "get_num_sub_groups", "memory_order", "memory_scope",
      "to_global", "to_local", "to_private", "enqueue_", "ndrange_", "get_default_queue", "get_kernel_",
      "read_pipe", "write_pipe", "reserve_", "commit_", "get_pipe_", "is_valid_", "create_user_event",
      "set_user_event_status", "retain_event", "release_event", "capture_event_profiling_info", "queue_t",
      "clk_event_t", "reserve_id_t", "ATOMIC_VAR_INIT", "ATOMIC_FLAG_INIT", "CLK_ENQUEUE_", "CLK_DEVICE_QUEUE_",
      "CLK_NULL_", "atomic_init", "atomic_work_item_fence", "atomic_store", "atomic_load", "atomic_exchange",
      "atomic_compare_exchange_", "atomic_fetch_", "atomic_flag", "atomic_int", "atomic_uint", "atomic_long",
      "atomic_ulong", "atomic_float", "atomic_double", "atomic_intptr_t", "atomic_uintptr_t", "atomic_size_t",
      "atomic_ptrdiff_t"};
  static const char* const kExact[] = {"ctz"};  // a 2.0 built-in function
  // A program-scope variable outside __constant (OpenCL C 2.0's global variables), and what
  // clang itself calls a feature 1.2 lacks (the generic address space).
  if (log.find("program scope variable must reside in constant address space") != std::string::npos ||
      log.find("OpenCL C version 1.2 does not support") != std::string::npos)
    return true;
  // A `pipe` parameter: 1.2 reads `pipe` as a parameter name of implicit type int, so the only
  // sign is that warning at a `pipe` token (the line clang echoes, and its caret below it).
  static const std::string kImplicitInt = "warning: type specifier missing";
  for (size_t at = log.find(kImplicitInt); at != std::string::npos; at = log.find(kImplicitInt, at + 1)) {
    const size_t sourceLine = log.find('\n', at);
    const size_t caretLine = sourceLine == std::string::npos ? sourceLine : log.find('\n', sourceLine + 1);
    if (caretLine == std::string::npos) break;
    const std::string text = log.substr(sourceLine + 1, caretLine - sourceLine - 1);
    const std::string caret = log.substr(caretLine + 1, log.find('\n', caretLine + 1) - caretLine - 1);
    const size_t column = caret.find('^');
    if (column == std::string::npos || column >= text.size() || text.compare(column, 4, "pipe") != 0) continue;
    const char after = column + 4 < text.size() ? text[column + 4] : ' ';
    if (!std::isalnum(static_cast<unsigned char>(after)) && after != '_') return true;
  }
  static const char* const kWordings[] = {"undeclared identifier '", "implicit declaration of function '",
                                          "unknown type name '"};
  for (const char* wording : kWordings) {
    for (size_t at = log.find(wording); at != std::string::npos; at = log.find(wording, at + 1)) {
      const size_t begin = at + std::strlen(wording);
      const std::string name = log.substr(begin, log.find('\'', begin) - begin);
      for (const char* prefix : kPrefixes)
        if (name.rfind(prefix, 0) == 0) return true;
      for (const char* exact : kExact)
        if (name == exact) return true;
    }
  }
  return false;
}

// Clang's diagnostics name the temporary copy it compiled (`dir`/kernel.cl, or "kernel.cl" after
// a prelude's #line) and the embedded headers' copies (`dir`/embedded/NAME), which are gone once
// cltrace exits: name the user's source and the headers' own names instead, so that an editor
// can jump to the error. Only where a location starts a line ("PATH:LINE: error: ...") or follows
// "In file included from ", and the copy's path quoted in a message (a byte order mark "detected
// in '`dir`/kernel.cl'").
std::string withSourceNamed(const std::string& log, const fs::path& dir, const std::string& sourceName) {
  const std::string name = sourceName.empty() ? "kernel.cl" : sourceName;
  const std::vector<std::pair<std::string, std::string>> renames = {
      {(dir / "kernel.cl").string() + ":", name + ":"},
      {"kernel.cl:", name + ":"},
      {(dir / "embedded").string() + "/", ""}};
  const std::string included = "In file included from ";
  std::string out;
  size_t pos = 0;
  while (pos < log.size()) {
    size_t end = log.find('\n', pos);
    if (end == std::string::npos) end = log.size();
    std::string line = log.substr(pos, end - pos);
    const size_t at = line.rfind(included, 0) == 0 ? included.size() : 0;
    // A location ("PATH:LINE:"), not a quoted source line that happens to start alike: the
    // line number follows the prefix (a file's) or the first ':' after it (the directory's).
    auto isLocation = [&](const std::string& from) {
      size_t colon = from.back() == ':' ? at + from.size() - 1 : line.find(':', at + from.size());
      return colon != std::string::npos && colon + 1 < line.size() &&
             std::isdigit(static_cast<unsigned char>(line[colon + 1]));
    };
    for (const auto& [from, to] : renames)
      if (line.compare(at, from.size(), from) == 0 && isLocation(from)) {
        line.replace(at, from.size(), to);
        break;
      }
    const std::string quoted = "'" + (dir / "kernel.cl").string() + "'";
    for (size_t q = line.find(quoted); q != std::string::npos; q = line.find(quoted, q + name.size() + 2))
      line.replace(q, quoted.size(), "'" + name + "'");
    out += line;
    if (end < log.size()) out += '\n';
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::string compileOpenCL(const std::string& source, const std::vector<std::string>& options,
                          const std::vector<EmbeddedHeader>& headers, const std::string& sourceName) {
  TempDir dir;
  writeFile(dir.path() / "kernel.cl", source);
  // Embedded headers go in a directory of their own, searched first (-I before the program's).
  const fs::path headerDir = dir.path() / "embedded";
  for (const EmbeddedHeader& h : headers) {
    const fs::path name(h.name);
    bool climbs = false;
    for (const fs::path& part : name) climbs = climbs || part == "..";
    if (h.name.empty() || name.is_absolute() || climbs)
      throw InstrumentError("embedded header name '" + h.name +
                            "' is not a relative path inside the program (cltrace writes embedded headers to a "
                            "directory of their own)");
    fs::create_directories((headerDir / name).parent_path());
    writeFile(headerDir / name, h.text);
  }
  // -fgnu89-inline: at -O0 clang emits a C99 `inline` function (common for OpenCL helpers)
  // as a mere declaration, leaving nothing to inline and its accesses unseen; GNU inline
  // semantics give it a body.
  // -gline-tables-only: each access's line and column, for its description (describe); the
  // prefix map names the program "kernel.cl" and an embedded header "embedded/NAME" in them.
  // The instrumented kernels leave without it (instrumentBitcode).
  // -O1 with clang's own optimization passes off: the code is -O0's (every access where the
  // source has it), but with the type-based alias tags a GPU compiler reasons with, so a float
  // load is read once in a loop that stores only ints, as the GPU reads it. Without lifetime
  // markers (their cleanups route a loop's `continue` and `break` through a switch, another
  // loop shape) and without the "do not unroll" tags -O1 puts on every loop (the device would
  // keep the instrumented loops rolled).
  std::vector<std::string> argv = {CLTRACE_CLANG_PATH, "-cl-std=CL1.2", "-target", "spir64",
                                   "-O1", "-Xclang", "-disable-llvm-passes", "-Xclang", "-disable-lifetime-markers",
                                   "-funroll-loops", "-fgnu89-inline",
                                   "-emit-llvm", "-cl-kernel-arg-info", "-gline-tables-only",
                                   "-fdebug-prefix-map=" + dir.path().string() + "/="};
  if (!headers.empty()) argv.insert(argv.end(), {"-I", headerDir.string()});
  for (const std::string& o : options) {
    if (o.rfind("-cl-std=", 0) == 0) {
      argv[1] = o;
      continue;
    }
    // Not an OpenCL build option, and an optimization level would reorder and merge the
    // accesses the passes must see in program order (the device still optimizes its build).
    if (o.rfind("-O", 0) == 0) continue;
    argv.push_back(o);
  }
  argv.insert(argv.end(), {"-c", (dir.path() / "kernel.cl").string(), "-o",
                           (dir.path() / "kernel.bc").string()});
  int status = runProcess(argv, dir.path() / "clang.log");
  std::string log = readFile(dir.path() / "clang.log");
  if (status != 0) {
    // Without -cl-std OpenCL C 1.2 is compiled, as OpenCL specifies, where PoCL's own compiler
    // takes 3.0: a 2.0/3.0 function (get_global_linear_id, work_group_reduce_add, ...) is then
    // undeclared here though the program builds.
    const std::string hint =
        argv[1] == "-cl-std=CL1.2" && namesOpenCL20Feature(log)
            ? "(cltrace compiles OpenCL C 1.2 when the build options name no -cl-std, as OpenCL specifies; a kernel "
              "that uses OpenCL C 2.0 or 3.0 needs -cl-std=CL2.0 or -cl-std=CL3.0 among its build options)\n"
            : "";
    throw InstrumentError("the kernel does not compile (clang-15 exit " + std::to_string(status) +
                          "):\n" + withSourceNamed(log, dir.path(), sourceName) + hint);
  }
  // Clang names the module after the temporary copy: a fixed name makes the same source give
  // the same bitcode, which the wrap layer's kernels and the device's program cache key on.
  LLVMContext ctx;
  std::unique_ptr<Module> m = parseBitcode(readFile(dir.path() / "kernel.bc"), ctx);
  m->setModuleIdentifier("kernel.cl");
  m->setSourceFileName("kernel.cl");
  return toBitcode(*m);
}

std::vector<std::string> listKernels(const std::string& bitcode) {
  LLVMContext ctx;
  std::unique_ptr<Module> m = parseBitcode(bitcode, ctx);
  std::vector<std::string> names;
  for (Function* f : kernelsOf(*m)) names.push_back(f->getName().str());
  return names;
}

InstrumentedKernel instrumentBitcode(const std::string& bitcode, const std::string& kernel) {
  LLVMContext ctx;
  std::unique_ptr<Module> m = parseBitcode(bitcode, ctx);
  // Clang names the module after the temporary file it compiled: a fixed name makes the same
  // source give the same bitcode, which the device's program cache (PoCL's) keys on.
  m->setModuleIdentifier("kernel.cl");
  m->setSourceFileName("kernel.cl");
  InstrumentedKernel out;
  out.kernel = kernel;
  std::string error;
  {
    Function* f = m->getFunction(kernel);
    if (!f || !isKernel(*f)) {
      std::string available;
      for (Function* k : kernelsOf(*m))
        available += (available.empty() ? "" : ", ") + k->getName().str();
      throw InstrumentError("no kernel named '" + cltrace::printable(kernel) + "'; kernels in this program: " +
                            (available.empty() ? "(none)" : available));
    }
    out.args = kernelArgs(*f);
    keepOnlyKernel(*m, *f);
  }
  if (!prepareModule(*m, error)) throw InstrumentError(error);
  keepOnlyKernel(*m, *m->getFunction(kernel));  // kernels it called are copied in by now
  rejectHiddenAccesses(*m->getFunction(kernel));
  std::unique_ptr<Module> countModule = CloneModule(*m);

  std::vector<KernelReport> reports;
  if (!instrumentModule(*countModule, Mode::Count, {kernel}, reports, error))
    throw InstrumentError(error);
  const bool countRunWritesBuffers = reports.front().countRunWritesBuffers;
  reports.clear();
  if (!instrumentModule(*m, Mode::Trace, {kernel}, reports, error)) throw InstrumentError(error);
  out.report = reports.front();
  out.report.countRunWritesBuffers = countRunWritesBuffers;
  useLoadableBuiltins(*countModule);
  useLoadableBuiltins(*m);
  // The source lines served the descriptions; the device gets the kernels as before.
  StripDebugInfo(*countModule);
  StripDebugInfo(*m);
  verify(*countModule, "count");
  verify(*m, "trace");
  out.countBitcode = toBitcode(*countModule);
  out.traceBitcode = toBitcode(*m);
  return out;
}

namespace {

// The asynchronous work-group copies as plain loops, so that their global accesses are loads
// and stores the passes record (PoCL's SPIR library lacks these builtins anyway). Each
// work-item copies the elements its linear local id selects, as GPUs share such copies out;
// wait_group_events is a barrier (every work-item of the group must reach it, as with a
// barrier). Defined before the kernel source, which then calls these definitions.
const char* kAsyncCopyPrelude = R"CL(
#define CLTRACE_LOCAL_LINEAR (get_local_id(0) + get_local_size(0) * (get_local_id(1) + get_local_size(1) * get_local_id(2)))
#define CLTRACE_LOCAL_SIZE (get_local_size(0) * get_local_size(1) * get_local_size(2))
// Element i = round + local linear id of each round: every work-item runs the same rounds (a
// loop whose trip count differed between work-items, as `for (i = id; i < n; i += size)`,
// before the barrier of wait_group_events made PoCL 3.1 crash or miscompute when n was a
// constant 1); the access counts and iteration counters are those of that loop.
#define CLTRACE_SHARE_OUT(n, copy) \
  for (size_t round = 0; round < (n); round += CLTRACE_LOCAL_SIZE) { \
    const size_t i = round + CLTRACE_LOCAL_LINEAR; \
    if (i < (n)) copy; \
  }
#define CLTRACE_ASYNC_COPY(T)                                                                            \
  event_t __attribute__((overloadable)) async_work_group_copy(__local T* d, const __global T* s, size_t n, event_t e) { \
    CLTRACE_SHARE_OUT(n, d[i] = s[i]);                    \
    return e;                                                                                            \
  }                                                                                                      \
  event_t __attribute__((overloadable)) async_work_group_copy(__global T* d, const __local T* s, size_t n, event_t e) { \
    CLTRACE_SHARE_OUT(n, d[i] = s[i]);                    \
    return e;                                                                                            \
  }                                                                                                      \
  event_t __attribute__((overloadable)) async_work_group_strided_copy(__local T* d, const __global T* s, size_t n, \
                                                                      size_t stride, event_t e) {        \
    CLTRACE_SHARE_OUT(n, d[i] = s[i * stride]);           \
    return e;                                                                                            \
  }                                                                                                      \
  event_t __attribute__((overloadable)) async_work_group_strided_copy(__global T* d, const __local T* s, size_t n, \
                                                                      size_t stride, event_t e) {        \
    CLTRACE_SHARE_OUT(n, d[i * stride] = s[i]);           \
    return e;                                                                                            \
  }
#define CLTRACE_ASYNC_COPIES(T) CLTRACE_ASYNC_COPY(T) CLTRACE_ASYNC_COPY(T##2) CLTRACE_ASYNC_COPY(T##3) \
  CLTRACE_ASYNC_COPY(T##4) CLTRACE_ASYNC_COPY(T##8) CLTRACE_ASYNC_COPY(T##16)
CLTRACE_ASYNC_COPIES(char) CLTRACE_ASYNC_COPIES(uchar) CLTRACE_ASYNC_COPIES(short) CLTRACE_ASYNC_COPIES(ushort)
CLTRACE_ASYNC_COPIES(int) CLTRACE_ASYNC_COPIES(uint) CLTRACE_ASYNC_COPIES(long) CLTRACE_ASYNC_COPIES(ulong)
CLTRACE_ASYNC_COPIES(float)
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
CLTRACE_ASYNC_COPIES(double)
#endif
void __attribute__((overloadable)) wait_group_events(int n, event_t* events) {
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}
#undef CLTRACE_ASYNC_COPIES
#undef CLTRACE_ASYNC_COPY
#undef CLTRACE_SHARE_OUT
#undef CLTRACE_LOCAL_SIZE
#undef CLTRACE_LOCAL_LINEAR
)CL";

// The source as compiled: the async-copy prelude first when the kernel uses those builtins,
// with line numbers (in clang's messages) still those of the user's file.
std::string withPreludes(const std::string& source) {
  if (source.find("async_work_group") == std::string::npos && source.find("wait_group_events") == std::string::npos)
    return source;
  // The source's lines keep their numbers after the prelude, under a name the diagnostics
  // rename to the user's file; the prelude's own lines are named as cltrace's.
  return "#line 1 \"<cltrace async-copy prelude>\"\n" + std::string(kAsyncCopyPrelude) + "#line 1 \"kernel.cl\"\n" +
         source;
}

}  // namespace

std::string compileProgramSource(const std::string& source, const std::vector<std::string>& options,
                                 const std::vector<EmbeddedHeader>& headers, const std::string& sourceName) {
  return compileOpenCL(withPreludes(source), options, headers, sourceName);
}

namespace {

// Names the program's own file in `m`'s line tables `name` (compileOpenCL names it "kernel.cl"
// in every unit): each unit of a linked program has its own lines ("unit2 line 3:53").
void nameProgramFile(Module& m, const std::string& name) {
  DebugInfoFinder finder;
  finder.processModule(m);
  SmallPtrSet<DIFile*, 4> files;
  for (DICompileUnit* cu : finder.compile_units()) files.insert(cu->getFile());
  for (DISubprogram* sp : finder.subprograms()) files.insert(sp->getFile());
  for (DIScope* scope : finder.scopes()) files.insert(scope->getFile());
  for (DIFile* f : files)
    if (f && f->getFilename() == "kernel.cl") f->replaceOperandWith(0, MDString::get(m.getContext(), name));
}

}  // namespace

std::string linkBitcode(const std::vector<std::string>& units) {
  if (units.empty()) throw InstrumentError("nothing to link");
  LLVMContext ctx;
  // Each unit that uses the asynchronous copies has cltrace's definitions of them (the same in
  // every unit): the linker keeps one.
  auto shareCopyDefinitions = [](Module& m) {
    for (Function& f : m)
      if (!f.isDeclaration() && (f.getName().contains("async_work_group") || f.getName().contains("wait_group_events")))
        f.setLinkage(GlobalValue::LinkOnceODRLinkage);
  };
  // The linker reports clashes (a function defined in two units) through the context's
  // diagnostic handler, which would print them and exit: collect them instead.
  std::string diagnostics;
  raw_string_ostream os(diagnostics);
  ctx.setDiagnosticHandlerCallBack(
      [](const DiagnosticInfo& d, void* out) {
        DiagnosticPrinterRawOStream printer(*static_cast<raw_string_ostream*>(out));
        d.print(printer);
      },
      &os);
  // Renamed as each is read: the units' files are one node in the context until then.
  const bool several = units.size() > 1;
  std::unique_ptr<Module> linked = parseBitcode(units.front(), ctx);
  shareCopyDefinitions(*linked);
  if (several) nameProgramFile(*linked, "unit1");
  Linker linker(*linked);
  for (size_t i = 1; i < units.size(); ++i) {
    std::unique_ptr<Module> unit = parseBitcode(units[i], ctx);
    shareCopyDefinitions(*unit);
    nameProgramFile(*unit, "unit" + std::to_string(i + 1));
    if (linker.linkInModule(std::move(unit))) {
      os.flush();
      throw InstrumentError("the program's units do not link: " + diagnostics);
    }
  }
  return toBitcode(*linked);
}

uint64_t sourceHashOf(const std::string& source, const std::vector<EmbeddedHeader>& headers) {
  // Without headers the hash is the source's own, as a file's would be.
  std::string hashed = source;
  for (const EmbeddedHeader& h : headers) hashed += '\0' + h.name + '\0' + h.text;
  return fnv1a64(hashed.data(), hashed.size());
}

InstrumentedKernel instrumentSource(const std::string& source, const std::string& kernel,
                                    const std::vector<std::string>& options,
                                    const std::vector<EmbeddedHeader>& headers, const std::string& sourceName) {
  InstrumentedKernel k = instrumentBitcode(compileProgramSource(source, options, headers, sourceName), kernel);
  k.sourceHash = sourceHashOf(source, headers);
  return k;
}

std::string bitcodeToText(const std::string& bitcode) {
  LLVMContext ctx;
  std::unique_ptr<Module> m = parseBitcode(bitcode, ctx);
  std::string text;
  raw_string_ostream os(text);
  m->print(os, nullptr);
  os.flush();
  return text;
}

std::vector<std::string> withSourceDirectory(const std::string& path, std::vector<std::string> options) {
  std::error_code ec;
  const fs::path dir = fs::absolute(path, ec).parent_path();
  if (!ec && !dir.empty()) options.insert(options.begin(), {"-iquote", dir.string()});
  return options;
}

std::vector<std::string> splitOptions(const std::string& options) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;
  char quote = 0;
  for (char c : options) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      inWord = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (inWord) words.push_back(word);
      word.clear();
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push_back(word);
  return words;
}

std::string spirvReady(const std::string& bitcode) {
  LLVMContext ctx;
  std::unique_ptr<Module> m = parseBitcode(bitcode, ctx);
  const bool overloads = useNamedSpaceOverloads(*m);  // every library has these, not every one the generic ones
  static const std::map<std::string, uint64_t> kPastLastDimension = {
      {"_Z13get_global_idj", 0},    {"_Z12get_local_idj", 0},     {"_Z12get_group_idj", 0},
      {"_Z17get_global_offsetj", 0}, {"_Z15get_global_sizej", 1}, {"_Z14get_local_sizej", 1},
      {"_Z14get_num_groupsj", 1},    {"_Z23get_enqueued_local_sizej", 1}};
  std::vector<IntrinsicInst*> multiplyAdds, bitReversals;
  std::vector<std::pair<CallInst*, uint64_t>> pastLastDimension;
  for (Function& f : *m)
    for (Instruction& i : instructions(f)) {
      if (auto* call = dyn_cast<IntrinsicInst>(&i); call && call->getIntrinsicID() == Intrinsic::fmuladd) {
        multiplyAdds.push_back(call);
      } else if (auto* rev = dyn_cast<IntrinsicInst>(&i); rev && rev->getIntrinsicID() == Intrinsic::bitreverse) {
        const unsigned bits = rev->getType()->getScalarSizeInBits();
        if (bits >= 2 && bits <= 64 && (bits & (bits - 1)) == 0) bitReversals.push_back(rev);
      } else if (auto* c = dyn_cast<CallInst>(&i); c && c->getCalledFunction() && c->arg_size() == 1) {
        auto known = kPastLastDimension.find(c->getCalledFunction()->getName().str());
        auto* dim = dyn_cast<ConstantInt>(c->getArgOperand(0));
        if (known != kPastLastDimension.end() && dim && dim->getZExtValue() >= 3)
          pastLastDimension.push_back({c, known->second});
      }
    }
  if (!overloads && multiplyAdds.empty() && pastLastDimension.empty() && bitReversals.empty()) return bitcode;
  // llvm.bitreverse (clang's __builtin_bitreverse*) has no SPIR-V form without an extension
  // llvm-spirv-15 does not write: swap ever larger halves (bits, pairs, nibbles, ...) instead.
  for (IntrinsicInst* call : bitReversals) {
    IRBuilder<> b(call);
    Type* type = call->getType();
    const unsigned bits = type->getScalarSizeInBits();
    Value* v = call->getArgOperand(0);
    for (unsigned shift = 1; shift < bits; shift *= 2) {
      uint64_t low = 0;  // the lower `shift` bits of every 2 * shift bits
      for (unsigned bit = 0; bit < bits; ++bit)
        if ((bit / shift) % 2 == 0) low |= uint64_t(1) << bit;
      Constant* mask = ConstantInt::get(type, low);
      Constant* amount = ConstantInt::get(type, shift);
      v = b.CreateOr(b.CreateAnd(b.CreateLShr(v, amount), mask), b.CreateShl(b.CreateAnd(v, mask), amount));
    }
    call->replaceAllUsesWith(v);
    call->eraseFromParent();
  }
  for (IntrinsicInst* call : multiplyAdds) {
    Function* fma = Intrinsic::getDeclaration(m.get(), Intrinsic::fma, {call->getType()});
    IRBuilder<> b(call);
    CallInst* fused = b.CreateCall(fma, {call->getArgOperand(0), call->getArgOperand(1), call->getArgOperand(2)});
    fused->copyFastMathFlags(call);
    call->replaceAllUsesWith(fused);
    call->eraseFromParent();
  }
  for (auto [call, value] : pastLastDimension) {
    call->replaceAllUsesWith(ConstantInt::get(call->getType(), value));
    call->eraseFromParent();
  }
  return toBitcode(*m);
}

std::string poclReady(const std::string& bitcode) {
  // The half_* functions PoCL renames and keeps only under the new name (OpenCL C 1.2, 6.12.2).
  static const std::set<std::string> kRenamed = {"cos",  "divide", "exp",   "exp10", "exp2", "log",  "log10",
                                                 "log2", "powr",   "recip", "rsqrt", "sin",  "sqrt", "tan"};
  LLVMContext ctx;
  std::unique_ptr<Module> m = parseBitcode(bitcode, ctx);
  bool changed = useNamedSpaceOverloads(*m);
  for (Function& f : *m) {
    if (!f.isDeclaration()) continue;
    // Itanium mangling: _Z <length> half_<name> <parameter types>.
    StringRef name = f.getName();
    if (!name.consume_front("_Z")) continue;
    unsigned length = 0;
    if (name.consumeInteger(10, length) || length > name.size()) continue;
    StringRef base = name.take_front(length);
    if (!base.consume_front("half_") || !kRenamed.count(base.str())) continue;
    f.setName("_Z" + std::to_string(length + 4) + "_cl_half_" + base.str() + name.drop_front(length).str());
    changed = true;
  }
  return changed ? toBitcode(*m) : bitcode;
}

}  // namespace cltrace::passes
