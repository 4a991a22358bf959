// Shared helpers for the wrapper tests: an OpenCL context on the default device, buffers,
// and reading a whole trace file back.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cltrace/trace_file.h"
#include "cltrace/wrapper/traced_kernel.h"

namespace cltrace::test {

struct OpenCLEnv {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::vector<cl_mem> buffers;

  OpenCLEnv() {
    device = wrapper::defaultDevice();
    cl_int err = CL_SUCCESS;
    context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    wrapper::check(err, "clCreateContext");
    queue = wrapper::createCommandQueue(context, device);
  }
  ~OpenCLEnv() {
    for (cl_mem m : buffers) clReleaseMemObject(m);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
  }

  template <typename T>
  cl_mem buffer(const std::vector<T>& data) {
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                              data.size() * sizeof(T), const_cast<T*>(data.data()), &err);
    wrapper::check(err, "clCreateBuffer");
    buffers.push_back(m);
    return m;
  }

  template <typename T>
  std::vector<T> read(cl_mem m, size_t count) {
    std::vector<T> out(count);
    wrapper::check(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, count * sizeof(T), out.data(), 0,
                                       nullptr, nullptr),
                   "clEnqueueReadBuffer");
    return out;
  }
};

struct WholeTrace {
  TraceHeader header;
  std::vector<std::vector<Record>> workItems;  // in file order
};

inline WholeTrace readWholeTrace(const std::string& path) {
  TraceReader reader(path);
  WholeTrace t;
  t.header = reader.header();
  std::vector<Record> records;
  while (reader.nextWorkItem(records)) t.workItems.push_back(records);
  return t;
}

inline std::string tempPath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "cltrace-tests";
  std::filesystem::create_directories(dir);
  return (dir / (name + "-" + std::to_string(::getpid()) + ".cltrace")).string();
}

inline NDRange range2d(uint64_t gx, uint64_t gy, uint64_t lx, uint64_t ly) {
  return NDRange::fromSizes({gx, gy}, {lx, ly});
}

}  // namespace cltrace::test
