#include "cltrace/passes/instrumenter.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cltrace/passes/access_enumeration.h"
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

std::vector<KernelArg> kernelArgs(const Function& f) {
  std::vector<KernelArg> args;
  for (const Argument& a : f.args()) {
    KernelArg k;
    unsigned i = a.getArgNo();
    k.name = metadataString(f, "kernel_arg_name", i);
    if (k.name.empty()) k.name = a.hasName() ? a.getName().str() : "arg" + std::to_string(i);
    k.type = metadataString(f, "kernel_arg_type", i);
    if (auto* pt = dyn_cast<PointerType>(a.getType())) {
      k.isPointer = true;
      k.addressSpace = pt->getAddressSpace();
    }
    args.push_back(std::move(k));
  }
  return args;
}

void verify(const Module& m, const char* what) {
  std::string problems;
  raw_string_ostream os(problems);
  if (verifyModule(m, &os))
    throw InstrumentError(std::string("internal error: the ") + what +
                          " module does not verify:\n" + os.str());
}


}  // namespace

std::string compileOpenCL(const std::string& source, const std::vector<std::string>& options) {
  TempDir dir;
  writeFile(dir.path() / "kernel.cl", source);
  std::vector<std::string> argv = {CLTRACE_CLANG_PATH, "-cl-std=CL1.2", "-target", "spir64",
                                   "-O0", "-Xclang", "-disable-O0-optnone", "-emit-llvm",
                                   "-cl-kernel-arg-info"};
  for (const std::string& o : options) {
    if (o.rfind("-cl-std=", 0) == 0) {
      argv[1] = o;
      continue;
    }
    argv.push_back(o);
  }
  argv.insert(argv.end(), {"-c", (dir.path() / "kernel.cl").string(), "-o",
                           (dir.path() / "kernel.bc").string()});
  int status = runProcess(argv, dir.path() / "clang.log");
  std::string log = readFile(dir.path() / "clang.log");
  if (status != 0)
    throw InstrumentError("the kernel does not compile (clang-15 exit " + std::to_string(status) +
                          "):\n" + log);
  return readFile(dir.path() / "kernel.bc");
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
      throw InstrumentError("no kernel named '" + kernel + "'; kernels in this program: " +
                            (available.empty() ? "(none)" : available));
    }
    out.args = kernelArgs(*f);
  }
  if (!prepareModule(*m, error)) throw InstrumentError(error);
  std::unique_ptr<Module> countModule = CloneModule(*m);

  std::vector<KernelReport> reports;
  if (!instrumentModule(*countModule, Mode::Count, {kernel}, reports, error))
    throw InstrumentError(error);
  reports.clear();
  if (!instrumentModule(*m, Mode::Trace, {kernel}, reports, error)) throw InstrumentError(error);
  out.report = reports.front();
  verify(*countModule, "count");
  verify(*m, "trace");
  out.countBitcode = toBitcode(*countModule);
  out.traceBitcode = toBitcode(*m);
  return out;
}

InstrumentedKernel instrumentSource(const std::string& source, const std::string& kernel,
                                    const std::vector<std::string>& options) {
  InstrumentedKernel k = instrumentBitcode(compileOpenCL(source, options), kernel);
  k.sourceHash = fnv1a64(source.data(), source.size());
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

}  // namespace cltrace::passes
