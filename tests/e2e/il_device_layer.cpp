// Test fixture: an OpenCL layer (ocl-icd 2.3, OPENCL_LAYERS) that turns the devices below it
// into SPIR-V-only devices, so that cltrace's clCreateProgramWithIL path runs end to end on a
// machine with no native SPIR-V implementation (PoCL 3.1 here reports no IL).
//
// Towards the program it looks like a device that reports IL version "SPIR-V_1.0" and lacks
// cl_khr_spir. A module given to clCreateProgramWithIL is checked as a driver would (magic word,
// a SPIR-V version the device reports, spirv-val), then translated
// back to LLVM bitcode with `llvm-spirv-15 -r`, the route PoCL 4 and later take for SPIR-V, and
// handed to the device below as SPIR; clBuildProgram adds `-x spir` for such programs.
// With IL_LAYER_LOG=FILE set, every module taken is logged there (size and version).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl_icd.h>
#include <CL/cl_layer.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cltrace/wrapper/layer_entry.h"

namespace {

const _cl_icd_dispatch* target = nullptr;
_cl_icd_dispatch dispatch;
std::mutex mutex;
std::set<cl_program> programsFromIl;

constexpr const char* kIlVersion = "SPIR-V_1.0";
constexpr const char* kMemFence = "_Z9mem_fencej";
// The data layout llvm-spirv-15 gives spir64 modules it reads back.
constexpr const char* kSpir64Layout =
    "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-f32:32:32-f64:64:64-v16:16:16-v24:32:32-"
    "v32:32:32-v48:64:64-v64:64:64-v96:128:128-v128:128:128-v192:256:256-v256:256:256-v512:512:512-"
    "v1024:1024:1024";
constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kHighestVersionTaken = 0x00010000;  // SPIR-V 1.0, as kIlVersion says

cl_int returnString(const std::string& s, size_t size, void* value, size_t* sizeRet) {
  if (sizeRet) *sizeRet = s.size() + 1;
  if (value) {
    if (size < s.size() + 1) return CL_INVALID_VALUE;
    std::memcpy(value, s.c_str(), s.size() + 1);
  }
  return CL_SUCCESS;
}

std::string extensionsWithoutSpir(cl_device_id device) {
  size_t size = 0;
  target->clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &size);
  std::string all(size, '\0');
  target->clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, all.data(), nullptr);
  std::istringstream words(all.c_str());
  std::string kept, word;
  while (words >> word)
    if (word != "cl_khr_spir") kept += word + " ";
  return kept + "cl_khr_il_program";
}

cl_int CL_API_CALL getDeviceInfo(cl_device_id device, cl_device_info name, size_t size, void* value,
                                 size_t* sizeRet) {
  if (name == CL_DEVICE_IL_VERSION) return returnString(kIlVersion, size, value, sizeRet);
  if (name == CL_DEVICE_EXTENSIONS) return returnString(extensionsWithoutSpir(device), size, value, sizeRet);
  return target->clGetDeviceInfo(device, name, size, value, sizeRet);
}

void log(const std::string& line) {
  if (const char* path = std::getenv("IL_LAYER_LOG")) {
    std::ofstream out(path, std::ios::app);
    out << line << "\n";
  }
}

// SPIR-V module -> LLVM bitcode through llvm-spirv-15 -r, after spirv-val. Empty on failure.
std::string bitcodeOf(const void* il, size_t length) {
  namespace fs = std::filesystem;
  std::string dir = (fs::temp_directory_path() / "il-layer-XXXXXX").string();
  if (!mkdtemp(dir.data())) return "";
  fs::path spv = fs::path(dir) / "m.spv", bc = fs::path(dir) / "m.bc";
  std::ofstream(spv, std::ios::binary).write(static_cast<const char*>(il), static_cast<std::streamsize>(length));
  // Core SPIR-V rules: spirv-val's OpenCL environments refuse Int64Atomics, which devices with
  // cl_khr_int64_base_atomics (PoCL's CPU device) take.
  std::string validate = "spirv-val --target-env spv1.0 '" + spv.string() + "' >&2";
  std::string translate = "llvm-spirv-15 -r --spirv-target-env=CL1.2 '" + spv.string() + "' -o '" + bc.string() + "'";
  auto read = [](const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  std::string bitcode;
  if (std::system(validate.c_str()) == 0 && std::system(translate.c_str()) == 0) bitcode = read(bc);
  // OpMemoryBarrier comes back as mem_fence, which PoCL's SPIR library lacks: this device's
  // library supplies it.
  if (bitcode.find(kMemFence) != std::string::npos) {
    fs::path fence = fs::path(dir) / "fence.ll", linked = fs::path(dir) / "linked.bc";
    std::ofstream(fence) << "target datalayout = \"" << kSpir64Layout << "\"\ntarget triple = \"spir64-unknown-unknown\"\n"
                         << "define spir_func void @" << kMemFence << "(i32 %flags) {\n  fence seq_cst\n  ret void\n}\n";
    std::string link = "llvm-link-15 '" + bc.string() + "' '" + fence.string() + "' -o '" + linked.string() + "'";
    bitcode = std::system(link.c_str()) == 0 ? read(linked) : "";
  }
  // OpenCL.std's half_* math comes back as half_sqrt etc., which PoCL's library has only as
  // _cl_half_sqrt etc. (the names PoCL's source compile uses): this device's library supplies
  // them under both.
  if (!bitcode.empty() && bitcode.find("half_") != std::string::npos) {
    fs::path text = fs::path(dir) / "m.ll", renamed = fs::path(dir) / "renamed.bc";
    std::ofstream(fs::path(dir) / "in.bc", std::ios::binary) << bitcode;
    std::string dis = "llvm-dis-15 '" + (fs::path(dir) / "in.bc").string() + "' -o '" + text.string() + "'";
    bitcode.clear();
    if (std::system(dis.c_str()) == 0) {
      static const std::regex kHalfMath("@_Z([0-9]+)half_(cos|divide|exp10|exp2|exp|log10|log2|log|powr|recip|rsqrt|sin|sqrt|tan)");
      std::string ir = read(text), out;
      auto last = ir.cbegin();
      for (std::sregex_iterator m(ir.begin(), ir.end(), kHalfMath), end; m != end; ++m) {
        out.append(last, (*m)[0].first);
        out += "@_Z" + std::to_string(std::stoi((*m)[1].str()) + 4) + "_cl_half_" + (*m)[2].str();
        last = (*m)[0].second;
      }
      out.append(last, ir.cend());
      std::ofstream(text) << out;
      std::string as = "llvm-as-15 '" + text.string() + "' -o '" + renamed.string() + "'";
      if (std::system(as.c_str()) == 0) bitcode = read(renamed);
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return bitcode;
}

cl_program CL_API_CALL createProgramWithIL(cl_context context, const void* il, size_t length, cl_int* errcodeRet) {
  auto fail = [&](cl_int err) -> cl_program {
    if (errcodeRet) *errcodeRet = err;
    return nullptr;
  };
  if (!il || length < 20 || length % 4 != 0) return fail(CL_INVALID_VALUE);
  uint32_t header[2];
  std::memcpy(header, il, sizeof header);
  if (header[0] != kSpirvMagic) return fail(CL_INVALID_VALUE);
  if (header[1] > kHighestVersionTaken) {
    log("refused: SPIR-V version " + std::to_string(header[1] >> 16) + "." + std::to_string((header[1] >> 8) & 0xff));
    return fail(CL_INVALID_VALUE);
  }
  std::string bitcode = bitcodeOf(il, length);
  if (bitcode.empty()) return fail(CL_INVALID_VALUE);

  size_t count = 0;
  cl_int err = target->clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &count);
  if (err != CL_SUCCESS) return fail(err);
  std::vector<cl_device_id> devices(count / sizeof(cl_device_id));
  target->clGetContextInfo(context, CL_CONTEXT_DEVICES, count, devices.data(), nullptr);
  std::vector<size_t> sizes(devices.size(), bitcode.size());
  std::vector<const unsigned char*> binaries(devices.size(), reinterpret_cast<const unsigned char*>(bitcode.data()));
  cl_program program = target->clCreateProgramWithBinary(context, static_cast<cl_uint>(devices.size()), devices.data(),
                                                         sizes.data(), binaries.data(), nullptr, &err);
  if (err != CL_SUCCESS) return fail(err);
  {
    std::lock_guard<std::mutex> lock(mutex);
    programsFromIl.insert(program);
  }
  log("clCreateProgramWithIL: " + std::to_string(length) + " bytes, SPIR-V " + std::to_string(header[1] >> 16) +
      "." + std::to_string((header[1] >> 8) & 0xff));
  if (errcodeRet) *errcodeRet = CL_SUCCESS;
  return program;
}

cl_int CL_API_CALL buildProgram(cl_program program, cl_uint numDevices, const cl_device_id* devices,
                                const char* options, void(CL_CALLBACK* notify)(cl_program, void*), void* userData) {
  bool fromIl;
  {
    std::lock_guard<std::mutex> lock(mutex);
    fromIl = programsFromIl.count(program) != 0;
  }
  if (!fromIl) return target->clBuildProgram(program, numDevices, devices, options, notify, userData);
  std::string spirOptions = std::string("-x spir -spir-std=1.2 ") + (options ? options : "");
  return target->clBuildProgram(program, numDevices, devices, spirOptions.c_str(), notify, userData);
}

// Forget a program when its last reference goes, so that a later program at the same address
// is not built as SPIR.
cl_int CL_API_CALL releaseProgram(cl_program program) {
  cl_uint references = 0;
  if (target->clGetProgramInfo(program, CL_PROGRAM_REFERENCE_COUNT, sizeof references, &references, nullptr) ==
          CL_SUCCESS &&
      references == 1) {
    std::lock_guard<std::mutex> lock(mutex);
    programsFromIl.erase(program);
  }
  return target->clReleaseProgram(program);
}

}  // namespace

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void* value, size_t* sizeRet) {
  return cltrace::wrapper::layer::apiVersionInfo(name, size, value, sizeRet);
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint numEntries, const _cl_icd_dispatch* targetDispatch,
                                            cl_uint* numEntriesRet, const _cl_icd_dispatch** layerDispatch) {
  cl_int err = cltrace::wrapper::layer::initDispatch(numEntries, targetDispatch, dispatch, numEntriesRet, layerDispatch);
  if (err != CL_SUCCESS) return err;
  target = targetDispatch;
  dispatch.clGetDeviceInfo = &getDeviceInfo;
  dispatch.clCreateProgramWithIL = &createProgramWithIL;
  dispatch.clBuildProgram = &buildProgram;
  dispatch.clReleaseProgram = &releaseProgram;
  return CL_SUCCESS;
}

}  // extern "C"
