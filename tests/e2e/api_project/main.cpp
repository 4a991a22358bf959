// A user's program with cltrace's C++ API: y = 2x + y on 64 floats, traced into argv[1];
// prints y[10] and the trace's record count.
#include <cstdio>
#include <vector>

#include "cltrace/wrapper/api.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: myapp TRACE\n");
    return 2;
  }
  namespace api = cltrace::api;
  api::Context ctx;
  api::Program prog(ctx, "__kernel void saxpy(__global const float* x, __global float* y, float a) {\n"
                         "  size_t i = get_global_id(0);\n  y[i] = a * x[i] + y[i];\n}\n");
  prog.build();
  api::Kernel k(prog, "saxpy");
  std::vector<float> x(64), y(64, 1.0f);
  for (int i = 0; i < 64; ++i) x[i] = float(i);
  api::Buffer bx(ctx, CL_MEM_READ_ONLY, 256, x.data()), by(ctx, CL_MEM_READ_WRITE, 256, y.data());
  k.setArg(0, bx);
  k.setArg(1, by);
  k.setArg(2, 2.0f);
  api::CommandQueue q(ctx);
  auto result = q.enqueueNDRangeKernel(k, {64}, {16}, api::Trace{argv[1]});
  q.read(by, y.data(), 256);
  std::printf("y[10] = %g, %llu records\n", y[10], static_cast<unsigned long long>(result->header.recordCount));
  return 0;
}
