// An ordinary OpenCL host program with images and samplers: `blur` reads a 64x4 float image
// (pixel i holds i) through a sampler the kernel declares and, one to the right, through one the
// host makes (clamped to the edge), and the pixel on the right picks the weight it reads, so
// that its trace shows the image's pixels and the sampler's addressing mode; `paint`
// writes that buffer, doubled, to a second image (and 1s to a third, which the host may not
// access), which the host reads back and prints; then `bump` adds 1 to that image in place
// twice (bound as both its read_only and its write_only argument), counting the pixels it read
// by their value mod 8 with atomics, and the host prints the image and the counts. With
// $IMAGE_PLATFORM set, the first platform whose name contains it. Used to test `cltrace wrap`
// on image kernels (wrap_images.sh).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "host_check.h"

namespace {

const char* kSource = R"(
__constant sampler_t clampNearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void blur(__read_only image2d_t src, sampler_t smp, __global const float* weights, __global float* out,
                   int w) {
  int x = get_global_id(0), y = get_global_id(1);
  float a = read_imagef(src, clampNearest, (int2)(x, y)).x;
  float b = read_imagef(src, smp, (int2)(x + 1, y)).x;
  out[y * w + x] = a * weights[(int)b % 4];
}
__kernel void paint(__write_only image2d_t dst, __global const float* in, int w, __write_only image2d_t scratch) {
  int x = get_global_id(0), y = get_global_id(1);
  write_imagef(dst, (int2)(x, y), (float4)(in[y * w + x] * 2.0f, 0.0f, 0.0f, 1.0f));
  write_imagef(scratch, (int2)(x, y), (float4)(1.0f));
}
__kernel void bump(__read_only image2d_t from, __write_only image2d_t to, __global int* hist) {
  int x = get_global_id(0), y = get_global_id(1);
  float p = read_imagef(from, clampNearest, (int2)(x, y)).x;
  write_imagef(to, (int2)(x, y), (float4)(p + 1.0f, 0.0f, 0.0f, 1.0f));
  atomic_inc(&hist[(int)p % 8]);
}
)";

cl_device_id chosenDevice() {
  const char* wanted = std::getenv("IMAGE_PLATFORM");
  cl_platform_id platforms[8];
  cl_uint count = 0;
  CHECK(clGetPlatformIDs(8, platforms, &count));
  for (cl_uint p = 0; p < count && p < 8; ++p) {
    char name[256] = {};
    CHECK(clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name - 1, name, nullptr));
    cl_device_id device = nullptr;
    if ((!wanted || std::strstr(name, wanted)) &&
        clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS)
      return device;
  }
  std::fprintf(stderr, "no OpenCL device\n");
  std::exit(1);
}

}  // namespace

int main() {
  enum { kWidth = 64, kHeight = 4 };
  cl_device_id device = chosenDevice();
  cl_int err;
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  CHECK(err);
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &err);
  CHECK(err);
  cl_program program = clCreateProgramWithSource(context, 1, &kSource, nullptr, &err);
  CHECK(err);
  CHECK(clBuildProgram(program, 1, &device, "", nullptr, nullptr));

  float pixels[kWidth * kHeight];
  for (int i = 0; i < kWidth * kHeight; ++i) pixels[i] = static_cast<float>(i);
  const float weights[4] = {1.0f, 0.5f, 0.25f, 2.0f};
  const cl_image_format format = {CL_R, CL_FLOAT};
  cl_image_desc desc = {};
  desc.image_type = CL_MEM_OBJECT_IMAGE2D;
  desc.image_width = kWidth;
  desc.image_height = kHeight;
  cl_mem src = clCreateImage(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, &desc, pixels, &err);
  CHECK(err);
  cl_mem dst = clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, nullptr, &err);
  CHECK(err);
  cl_mem scratch = clCreateImage(context, CL_MEM_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS, &format, &desc, nullptr, &err);
  CHECK(err);
  const int zeros[8] = {};
  cl_mem hist = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zeros,
                               const_cast<int*>(zeros), &err);
  CHECK(err);
  cl_mem weightBuffer = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof weights,
                                       const_cast<float*>(weights), &err);
  CHECK(err);
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof pixels, nullptr, &err);
  CHECK(err);
  cl_sampler sampler = clCreateSampler(context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &err);
  CHECK(err);

  const int width = kWidth;
  const size_t global[2] = {kWidth, kHeight}, local[2] = {32, 1};
  cl_kernel blur = clCreateKernel(program, "blur", &err);
  CHECK(err);
  CHECK(clSetKernelArg(blur, 0, sizeof src, &src));
  CHECK(clSetKernelArg(blur, 1, sizeof sampler, &sampler));
  CHECK(clSetKernelArg(blur, 2, sizeof weightBuffer, &weightBuffer));
  CHECK(clSetKernelArg(blur, 3, sizeof out, &out));
  CHECK(clSetKernelArg(blur, 4, sizeof width, &width));
  CHECK(clEnqueueNDRangeKernel(queue, blur, 2, nullptr, global, local, 0, nullptr, nullptr));
  cl_kernel paint = clCreateKernel(program, "paint", &err);
  CHECK(err);
  CHECK(clSetKernelArg(paint, 0, sizeof dst, &dst));
  CHECK(clSetKernelArg(paint, 1, sizeof out, &out));
  CHECK(clSetKernelArg(paint, 2, sizeof width, &width));
  CHECK(clSetKernelArg(paint, 3, sizeof scratch, &scratch));
  CHECK(clEnqueueNDRangeKernel(queue, paint, 2, nullptr, global, local, 0, nullptr, nullptr));

  float result[kWidth * kHeight];
  const size_t origin[3] = {0, 0, 0}, region[3] = {kWidth, kHeight, 1};
  auto print = [&](const char* what) {
    CHECK(clEnqueueReadImage(queue, dst, CL_TRUE, origin, region, 0, 0, result, 0, nullptr, nullptr));
    double sum = 0;
    for (float v : result) sum += v;
    std::printf("%sdst[0] %g, dst[63] %g, dst[64] %g, sum %.1f\n", what, result[0], result[63], result[64], sum);
  };
  print("");
  // dst updated in place twice: bound as both the image read and the one written.
  cl_kernel bump = clCreateKernel(program, "bump", &err);
  CHECK(err);
  CHECK(clSetKernelArg(bump, 0, sizeof dst, &dst));
  CHECK(clSetKernelArg(bump, 1, sizeof dst, &dst));
  CHECK(clSetKernelArg(bump, 2, sizeof hist, &hist));
  for (int i = 0; i < 2; ++i) CHECK(clEnqueueNDRangeKernel(queue, bump, 2, nullptr, global, local, 0, nullptr, nullptr));
  print("bumped twice: ");
  int counts[8];
  CHECK(clEnqueueReadBuffer(queue, hist, CL_TRUE, 0, sizeof counts, counts, 0, nullptr, nullptr));
  std::printf("hist");
  for (int c : counts) std::printf(" %d", c);
  std::printf("\n");
  clReleaseKernel(bump);
  clReleaseMemObject(hist);
  clReleaseMemObject(scratch);

  clReleaseKernel(paint);
  clReleaseKernel(blur);
  clReleaseSampler(sampler);
  clReleaseMemObject(out);
  clReleaseMemObject(weightBuffer);
  clReleaseMemObject(dst);
  clReleaseMemObject(src);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
