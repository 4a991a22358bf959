// The standalone runner on the bundled kernels: exact record counts and addresses for the
// transpose and the 7-point stencil, outputs identical with and without tracing.
#include <cmath>
#include <fstream>
#include <unistd.h>

#include "cltrace/wrapper/standalone.h"
#include "test_support.h"
#include "message_of.h"

using namespace cltrace;
using namespace cltrace::test;

namespace {

std::string kernelPath(const std::string& name) {
  return std::string(CLTRACE_SOURCE_DIR) + "/kernels/" + name;
}

wrapper::RunSpec specOf(const std::string& file, const std::string& kernel, NDRange r,
                        std::vector<std::string> args) {
  wrapper::RunSpec s;
  s.sourcePath = kernelPath(file);
  s.kernel = kernel;
  s.range = r;
  for (const auto& a : args) s.args.push_back(wrapper::parseArgSpec(a));
  return s;
}

TEST(Standalone, TransposeExactRecords) {
  // W = 8, H = 4: out[x * 4 + y] = in[y * 8 + x]; buffers of 128 bytes at 0 and 256.
  auto spec = specOf("mt.cl", "mt", range2d(8, 4, 4, 2),
                     {"buffer:float:32:iota", "buffer:float:32", "scalar:int:8", "scalar:int:4"});
  std::string path = tempPath("mt");
  wrapper::RunOutput out = wrapper::runStandalone(spec, path);
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 32u);
  EXPECT_EQ(t.header.recordCount, 64u);
  // File order: group (0,0) = x 0..3, y 0..1; then group (1,0) = x 4..7, y 0..1; ...
  for (uint64_t p = 0; p < 32; ++p) {
    uint64_t group = p / 8, local = p % 8;
    uint64_t x = (group % 2) * 4 + local % 4, y = (group / 2) * 2 + local / 4;
    const auto& r = t.workItems[p];
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].kind, uint8_t(AccessKind::Load));
    EXPECT_EQ(r[0].address, 4 * (y * 8 + x));
    EXPECT_EQ(r[1].kind, uint8_t(AccessKind::Store));
    EXPECT_EQ(r[1].address, 256 + 4 * (x * 4 + y));
    for (uint32_t i = 0; i < 2; ++i) {  // instruction i in program order, a float, no loop
      EXPECT_EQ(r[i].instruction, i);
      EXPECT_EQ(r[i].size, 4u);
      EXPECT_EQ(r[i].depth, 0u);
    }
  }
  // The transpose happened.
  std::vector<float> result(32);
  std::memcpy(result.data(), out.buffers[1].data(), 128);
  for (int x = 0; x < 8; ++x)
    for (int y = 0; y < 4; ++y) EXPECT_EQ(result[x * 4 + y], float(y * 8 + x));
  std::filesystem::remove(path);
}

TEST(Standalone, StencilExactRecords) {
  // nx = 8, ny = 4, nz = 4: interior x 1..6, y 1..2, z 1..2. Global x is 8 wide, so items
  // with x = 7, 8 make no access. Each interior item: 6 neighbour loads, its own load, a store.
  // A0 (512 bytes) sits at virtual 0, Anext at 512.
  NDRange r;
  r.dims = 3;
  r.global = {8, 2, 2};
  r.local = {8, 1, 1};
  auto spec = specOf("stencil.cl", "stencil", r,
                     {"scalar:float:0.5", "scalar:float:0.25", "buffer:float:128:iota",
                      "buffer:float:128", "scalar:int:8", "scalar:int:4", "scalar:int:4"});
  std::string path = tempPath("stencil");
  wrapper::RunOutput out = wrapper::runStandalone(spec, path);
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 32u);
  EXPECT_EQ(t.header.recordCount, 24u * 8u);
  for (uint64_t p = 0; p < 32; ++p) {
    uint64_t gx = p % 8, gy = (p / 8) % 2, gz = p / 16;
    uint64_t x = gx + 1, y = gy + 1, z = gz + 1;
    const auto& recs = t.workItems[p];
    if (x >= 7) {
      EXPECT_TRUE(recs.empty()) << p;
      continue;
    }
    ASSERT_EQ(recs.size(), 8u) << p;
    auto at = [](uint64_t xx, uint64_t yy, uint64_t zz) { return 4 * (xx + 8 * (yy + 4 * zz)); };
    std::vector<uint64_t> want = {at(x, y, z + 1), at(x, y, z - 1), at(x, y + 1, z), at(x, y - 1, z),
                                  at(x + 1, y, z), at(x - 1, y, z), at(x, y, z)};
    for (size_t i = 0; i < 7; ++i) {
      EXPECT_EQ(recs[i].kind, uint8_t(AccessKind::Load));
      EXPECT_EQ(recs[i].address, want[i]) << "work-item " << p << " load " << i;
    }
    EXPECT_EQ(recs[7].kind, uint8_t(AccessKind::Store));
    EXPECT_EQ(recs[7].address, 512 + at(x, y, z));
    for (uint32_t i = 0; i < 8; ++i) {  // the loads are instructions 0..6 in source order, the store 7
      EXPECT_EQ(recs[i].instruction, i) << "work-item " << p;
      EXPECT_EQ(recs[i].size, 4u);
      EXPECT_EQ(recs[i].depth, 0u);
    }
  }
  std::filesystem::remove(path);
}

TEST(Standalone, OutputsIdenticalWithAndWithoutTracing) {
  auto check = [](const wrapper::RunSpec& spec) {
    std::string path = tempPath("same");
    wrapper::RunOutput traced = wrapper::runStandalone(spec, path);
    wrapper::RunOutput plain = wrapper::runStandalone(spec, "");
    EXPECT_EQ(traced.buffers, plain.buffers) << spec.sourcePath;
    std::filesystem::remove(path);
  };
  check(specOf("mm.cl", "mm", range2d(16, 16, 8, 8),
               {"buffer:float:256:random:1", "buffer:float:256:random:2", "buffer:float:256",
                "scalar:int:16"}));
  NDRange r;
  r.dims = 3;
  r.global = {16, 6, 6};
  r.local = {16, 1, 1};
  check(specOf("stencil.cl", "stencil", r,
               {"scalar:float:0.5", "scalar:float:0.25", "buffer:float:512:random:4",
                "buffer:float:512", "scalar:int:8", "scalar:int:8", "scalar:int:8"}));
}

TEST(Standalone, HalfMathBuiltinsTraceOnPoclAndComputeWhatThePlainKernelDoes) {
  // PoCL's library has half_sqrt etc. only as _cl_half_sqrt etc.: without poclReady the
  // instrumented SPIR program would not link. Each work-item loads in[i] and stores out[i].
  wrapper::RunSpec spec;
  spec.sourcePath = std::string(CLTRACE_SOURCE_DIR) + "/tests/wrapper/kernels/half_math.cl";
  spec.kernel = "half_math";
  spec.range = NDRange::fromSizes({64}, {16});
  spec.args = {wrapper::parseArgSpec("buffer:float:64:random:3"), wrapper::parseArgSpec("buffer:float:64")};
  std::string path = tempPath("half");
  wrapper::RunOutput traced = wrapper::runStandalone(spec, path);
  wrapper::RunOutput plain = wrapper::runStandalone(spec, "");
  EXPECT_EQ(traced.buffers, plain.buffers);
  std::vector<float> result(64);
  std::memcpy(result.data(), plain.buffers[1].data(), 256);
  for (float v : result) EXPECT_TRUE(std::isfinite(v) && v != 0.0f) << v;
  // Buffers of 256 bytes at 0 and 256; file order is work-item order here (one dimension).
  WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.workItems.size(), 64u);
  for (uint64_t i = 0; i < 64; ++i) {
    const auto& r = t.workItems[i];
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].kind, uint8_t(AccessKind::Load));
    EXPECT_EQ(r[0].address, 4 * i);
    EXPECT_EQ(r[1].kind, uint8_t(AccessKind::Store));
    EXPECT_EQ(r[1].address, 256 + 4 * i);
  }
  std::filesystem::remove(path);
}

TEST(Standalone, ArgumentErrorsNameTheArgument) {
  auto expectInvalid = [](auto&& f, const std::string& words) {
    try {
      f();
      ADD_FAILURE() << "expected an error containing '" << words << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expectInvalid([] { wrapper::parseArgSpec("buffer:float"); }, "expected buffer:TYPE:COUNT[:INIT]");
  expectInvalid([] { wrapper::parseArgSpec("buffer:quux:4"); },
                "argument 'buffer:quux:4': unknown OpenCL type 'quux'; a buffer's TYPE is a scalar or vector type "
                "(for an array of structs, buffer:uchar:BYTES)");
  expectInvalid([] { wrapper::parseArgSpec("buffer::4"); }, "argument 'buffer::4': the type is empty; a buffer's TYPE");
  expectInvalid([] { wrapper::parseArgSpec("local::4"); }, "argument 'local::4': the type is empty (local:BYTES or");
  // A struct's name as a scalar type: what run can pass, and where a struct can be traced.
  expectInvalid([] { wrapper::parseArgSpec("scalar:Params:1"); },
                "argument 'scalar:Params:1': unknown OpenCL type 'Params'; a scalar is one of char, uchar, short, "
                "ushort, int, uint, long, ulong, float, double, half, size_t, or a vector of 2, 3, 4, 8 or 16 of "
                "them. `cltrace run` cannot build a struct passed by value; the C++ API and `cltrace wrap` pass it "
                "as the program sets it");
  expectInvalid([] { wrapper::parseArgSpec("buffer:int:4:sometimes"); }, "unknown initialiser 'sometimes'");
  expectInvalid([] { wrapper::parseArgSpec("scalar:int:abc"); }, "value 'abc' is not an integer (the argument is int)");
  expectInvalid([] { wrapper::parseArgSpec("scalar:float:x1"); }, "value 'x1' is not a number");
  expectInvalid([] { wrapper::parseArgSpec("scalar:int:2147483648"); }, "value '2147483648' does not fit in int");
  expectInvalid([] { wrapper::parseArgSpec("scalar:uchar:256"); }, "value '256' does not fit in uchar");
  expectInvalid([] { wrapper::parseArgSpec("scalar:uint:-3"); }, "value '-3' is negative but uint is unsigned");
  expectInvalid([] { wrapper::parseArgSpec("scalar:float4:1,2"); }, "float4 takes 1 value or 4 comma-separated values, 2 given");
  expectInvalid([] { wrapper::parseArgSpec("scalar:float3:1,2,3,4"); }, "float3 takes 1 value or 3 comma-separated values, 4 given");
  expectInvalid([] { wrapper::parseArgSpec("buffer:short:4:fill:40000"); }, "value '40000' does not fit in short");
  expectInvalid([] { wrapper::parseArgSpec("buffer:half:4:fill:70000"); }, "value '70000' does not fit in half");
  expectInvalid([] { wrapper::parseArgSpec("scalar:float:1e39"); }, "value '1e39' does not fit in float");
  expectInvalid([] { wrapper::parseArgSpec("images:x"); }, "must start with buffer:, scalar:, local:, image: or sampler:");
  std::vector<passes::KernelArg> params = {{"A", "float*", 1, true}, {"N", "int", 0, false}};
  expectInvalid([&] { wrapper::checkArgs({wrapper::parseArgSpec("buffer:float:4")}, params); },
                "the kernel takes 2 arguments (float* A, int N), 1 given; in order: --arg buffer:float:COUNT "
                "--arg scalar:int:VALUE");
  expectInvalid([&] {
    wrapper::checkArgs({wrapper::parseArgSpec("scalar:int:1"), wrapper::parseArgSpec("scalar:int:1")}, params);
  }, "argument 0 (float* A): a pointer needs buffer:TYPE:COUNT");
  expectInvalid([&] {
    wrapper::checkArgs({wrapper::parseArgSpec("buffer:float:4"), wrapper::parseArgSpec("scalar:long:1")}, params);
  }, "argument 1 (int N): given as long, the kernel expects int");
  expectInvalid([&] {
    wrapper::checkArgs({wrapper::parseArgSpec("buffer:float:4"), wrapper::parseArgSpec("scalar:float:1")}, params);
  }, "argument 1 (int N): given as float, the kernel expects int");
  expectInvalid([&] {
    wrapper::checkArgs({wrapper::parseArgSpec("buffer:float:4"), wrapper::parseArgSpec("scalar:uint:1")}, params);
  }, "argument 1 (int N): given as uint, the kernel expects int");
  // size_t parameters take ulong; a decimal with a leading zero is decimal.
  std::vector<passes::KernelArg> sized = {{"n", "size_t", 0, false}};
  wrapper::checkArgs({wrapper::parseArgSpec("scalar:ulong:010")}, sized);
  // A typedef of a built-in type is checked as that type (PolyBench's DATA_TYPE), as the
  // compiler resolves it (kernel_arg_base_type).
  const passes::InstrumentedKernel typed = passes::instrumentSource(
      "typedef float DATA_TYPE;\n__kernel void k(__global DATA_TYPE* a, DATA_TYPE alpha) { a[0] = alpha; }", "k", {});
  ASSERT_EQ(typed.args.size(), 2u);
  EXPECT_EQ(typed.args[1].type, "DATA_TYPE");
  EXPECT_EQ(typed.args[1].resolvedType(), "float");
  // Vectors as OpenCL C writes them (clang's base type spells an attribute).
  const passes::InstrumentedKernel vectors = passes::instrumentSource(
      "typedef float4 F4;\n__kernel void k(__global F4* a, F4 f, uint3 u) { a[0] = f; }", "k", {});
  ASSERT_EQ(vectors.args.size(), 3u);
  EXPECT_EQ(vectors.args[0].resolvedType(), "float4*");
  EXPECT_EQ(vectors.args[1].resolvedType(), "float4");
  EXPECT_EQ(vectors.args[2].resolvedType(), "uint3");
  wrapper::checkArgs({wrapper::parseArgSpec("buffer:float:4"), wrapper::parseArgSpec("scalar:float:1.5")}, typed.args);
  expectInvalid([&] {
    wrapper::checkArgs({wrapper::parseArgSpec("buffer:float:4"), wrapper::parseArgSpec("scalar:double:1.5")}, typed.args);
  }, "argument 1 (DATA_TYPE alpha): given as double, the kernel expects DATA_TYPE (float)");
  expectInvalid([&] {
    wrapper::checkArgs({wrapper::parseArgSpec("buffer:int:4"), wrapper::parseArgSpec("scalar:float:1.5")}, typed.args);
  }, "argument 0 (DATA_TYPE* a): a buffer of int, the kernel's elements are float");
  passes::KernelArg byValue{"p", "P", 0, false, 8};
  expectInvalid([&] { wrapper::checkArgs({wrapper::parseArgSpec("scalar:long:1")}, {byValue}); },
                "argument 0 (P p): a struct passed by value (8 bytes): `cltrace run` cannot build one");
}

TEST(Standalone, UnsignedNumbersAreDecimalOrHexAndFit64Bits) {
  EXPECT_EQ(wrapper::parseUnsigned("010"), 10u);  // not octal
  EXPECT_EQ(wrapper::parseUnsigned("0x400"), 1024u);
  EXPECT_EQ(wrapper::parseUnsigned("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(messageOf<std::invalid_argument>([] { wrapper::parseUnsigned("18446744073709551616"); }),
            "'18446744073709551616' does not fit in 64 bits");
  EXPECT_EQ(messageOf<std::invalid_argument>([] { wrapper::parseUnsigned("0x10000000000000000"); }),
            "'0x10000000000000000' does not fit in 64 bits");
  EXPECT_EQ(messageOf<std::invalid_argument>([] { wrapper::parseUnsigned("-1"); }), "'-1' is negative");
  for (const char* bad : {"", "+1", " 1", "1 ", "12a", "0x", "1.5", "1e3"})
    EXPECT_EQ(messageOf<std::invalid_argument>([&] { wrapper::parseUnsigned(bad); }), std::string("'") + bad + "' is not a non-negative integer");
}

TEST(Standalone, BufferSpecsRefuseWhatWouldBeIgnoredOrOverflow) {
  auto message = [](const std::string& spec) { return messageOf<std::invalid_argument>([&] { wrapper::parseArgSpec(spec); }); };
  EXPECT_EQ(message("buffer:float:1024:zeros:x"), "argument 'buffer:float:1024:zeros:x': zeros takes no value, but ':x' follows it");
  EXPECT_EQ(message("buffer:float:1024:iota:5"), "argument 'buffer:float:1024:iota:5': iota takes no value, but ':5' follows it");
  EXPECT_EQ(message("buffer:float:1024:zeros:"), "argument 'buffer:float:1024:zeros:': zeros takes no value, but ':' follows it");
  EXPECT_EQ(message("buffer:float:4:random:3:x"), "argument 'buffer:float:4:random:3:x': random takes one value (SEED), but ':x' follows it");
  EXPECT_EQ(message("buffer:float:4:fill:1:2"), "argument 'buffer:float:4:fill:1:2': fill takes one value, but ':2' follows it");
  EXPECT_EQ(message("buffer:float:4:fill"), "argument 'buffer:float:4:fill': expected buffer:TYPE:COUNT:fill:VALUE");
  EXPECT_EQ(message("buffer:float:4:file"), "argument 'buffer:float:4:file': expected buffer:TYPE:COUNT:file:PATH");
  EXPECT_EQ(message("buffer:float:18446744073709551616"),
            "argument 'buffer:float:18446744073709551616': count '18446744073709551616' does not fit in 64 bits");
  EXPECT_EQ(message("buffer:float:-4"), "argument 'buffer:float:-4': count '-4' is negative");
  EXPECT_EQ(message("buffer:float16:288230376151711744"),  // 2^58 elements of 64 bytes: 2^64 bytes
            "argument 'buffer:float16:288230376151711744': 288230376151711744 elements of float16 (64 bytes each) "
            "are more than 2^64 bytes");
  EXPECT_EQ(message("buffer:int:4:random:99999999999999999999"),
            "argument 'buffer:int:4:random:99999999999999999999': seed '99999999999999999999' does not fit in 64 bits");
  EXPECT_EQ(message("local:16x"), "argument 'local:16x': size '16x' is not a non-negative integer");
  EXPECT_EQ(message("local:16:x"), "argument 'local:16:x': unknown OpenCL type '16' (local:BYTES or local:TYPE:COUNT)");
  EXPECT_EQ(message("local:int:64:x"), "argument 'local:int:64:x': count '64:x' is not a non-negative integer");
  EXPECT_EQ(message("local:float:0"), "argument 'local:float:0': local size must be > 0");
  EXPECT_EQ(message("local:double:2305843009213693952"),  // 2^61 elements of 8 bytes: 2^64 bytes
            "argument 'local:double:2305843009213693952': 2305843009213693952 elements of double (8 bytes each) "
            "are more than 2^64 bytes");
  EXPECT_EQ(message("scalar:double:1e999"), "argument 'scalar:double:1e999': value '1e999' does not fit in double");
  // What stays accepted: one value each, a file path with ':' in it, decimal seeds and counts.
  EXPECT_EQ(wrapper::parseArgSpec("buffer:float:4:file:/data/a:b.bin").value, "/data/a:b.bin");
  EXPECT_EQ(wrapper::parseArgSpec("buffer:float:4:random:010").seed, 10u);
  EXPECT_EQ(wrapper::parseArgSpec("buffer:float:010").count, 10u);
  EXPECT_EQ(wrapper::parseArgSpec("buffer:float:4:fill:-2.5").value, "-2.5");
  EXPECT_EQ(wrapper::parseArgSpec("buffer:float:4:random").seed, 1u);
  EXPECT_EQ(wrapper::parseArgSpec("buffer:float16:288230376151711743").count, 288230376151711743u);
}

// image:ORDER/TYPE:SIZES[:INIT] gives the format, the dimensions by the number of sizes, and
// the channel values the initialiser fills; sampler:ADDRESSING:FILTER[:normalized] the modes.
// A launch with the wrong number of arguments is told the form of each, its type filled in where
// the kernel's is a built-in one (a typedef's as the type it names, size_t as ulong).
TEST(Standalone, ArgumentCountErrorListsEachArgumentsForm) {
  using passes::KernelArg;
  std::vector<KernelArg> params(8);
  params[0] = KernelArg{"s", "S*", 1, true};
  params[1] = KernelArg{"c", "float4*", 2, true};
  params[2] = KernelArg{"tmp", "DATA_TYPE*", 3, true, 0, KernelArg::Handle::None, false, "double*"};
  params[3] = KernelArg{"raw", "S*", 3, true};
  params[4] = KernelArg{"n", "size_t", 0, false};
  params[5] = KernelArg{"p", "Params", 0, false, 24};
  params[6] = KernelArg{"img", "image2d_t", 0, false, 0, KernelArg::Handle::Image};
  params[7] = KernelArg{"smp", "sampler_t", 0, false, 0, KernelArg::Handle::Sampler};
  try {
    wrapper::checkArgs({}, params);
    ADD_FAILURE() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "the kernel takes 8 arguments (S* s, float4* c, DATA_TYPE* tmp, S* raw, size_t n, Params p, image2d_t "
              "img, sampler_t smp), 0 given; in order: --arg buffer:TYPE:COUNT --arg buffer:float4:COUNT --arg "
              "local:double:COUNT --arg local:BYTES --arg scalar:ulong:VALUE --arg (a struct by value, which run "
              "cannot build) --arg image:ORDER/TYPE:WIDTHxHEIGHT --arg sampler:ADDRESSING:FILTER");
  }
  // A launch manifest's "args" are listed as its strings are written.
  try {
    wrapper::checkArgs({}, {params[1], params[4]}, wrapper::ArgSpelling::Manifest);
    ADD_FAILURE() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "the kernel takes 2 arguments (float4* c, size_t n), 0 given; in order: [\"buffer:float4:COUNT\", "
              "\"scalar:ulong:VALUE\"]");
  }
  try {
    wrapper::checkArgs({wrapper::parseArgSpec("buffer:float:4")}, {});
    ADD_FAILURE() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "the kernel takes 0 arguments (), 1 given");
  }
}

TEST(Standalone, LocalSizesInBytesOrAsTypeAndCount) {
  const wrapper::ArgSpec bytes = wrapper::parseArgSpec("local:256");
  EXPECT_EQ(bytes.kind, wrapper::ArgSpec::Kind::Local);
  EXPECT_EQ(bytes.bytes, 256u);
  const wrapper::ArgSpec floats = wrapper::parseArgSpec("local:float:64");
  EXPECT_EQ(floats.kind, wrapper::ArgSpec::Kind::Local);
  EXPECT_EQ(floats.bytes, 256u);
  EXPECT_EQ(wrapper::parseArgSpec("local:float4:3").bytes, 48u);
  EXPECT_EQ(wrapper::parseArgSpec("local:uchar:5").bytes, 5u);
  EXPECT_EQ(wrapper::parseArgSpec("local:double3:2").bytes, 64u);  // a 3-vector takes the room of 4
}

TEST(Standalone, ImageAndSamplerSpecs) {
  const wrapper::ArgSpec rgba = wrapper::parseArgSpec("image:rgba/unorm_int8:64x16:iota");
  EXPECT_EQ(rgba.kind, wrapper::ArgSpec::Kind::Image);
  EXPECT_EQ(rgba.format.image_channel_order, cl_channel_order(CL_RGBA));
  EXPECT_EQ(rgba.format.image_channel_data_type, cl_channel_type(CL_UNORM_INT8));
  EXPECT_EQ(rgba.imageDims, 2u);
  EXPECT_EQ(rgba.imageSize[0], 64u);
  EXPECT_EQ(rgba.imageSize[1], 16u);
  EXPECT_EQ(rgba.imageSize[2], 1u);
  EXPECT_EQ(rgba.type, "uchar");
  EXPECT_EQ(rgba.count, 64u * 16u * 4u);
  EXPECT_EQ(rgba.init, "iota");
  const wrapper::ArgSpec volume = wrapper::parseArgSpec("image:r/float:8x4x2:file:a:b.bin");
  EXPECT_EQ(volume.imageDims, 3u);
  EXPECT_EQ(volume.type, "float");
  EXPECT_EQ(volume.count, 64u);
  EXPECT_TRUE(volume.readsFile());
  EXPECT_EQ(volume.value, "a:b.bin");
  const wrapper::ArgSpec line = wrapper::parseArgSpec("image:rg/signed_int16:100");
  EXPECT_EQ(line.imageDims, 1u);
  EXPECT_EQ(line.type, "short");
  EXPECT_EQ(line.count, 200u);
  EXPECT_EQ(line.init, "zeros");
  const wrapper::ArgSpec edge = wrapper::parseArgSpec("sampler:clamp_to_edge:linear");
  EXPECT_EQ(edge.kind, wrapper::ArgSpec::Kind::Sampler);
  EXPECT_EQ(edge.addressing, cl_addressing_mode(CL_ADDRESS_CLAMP_TO_EDGE));
  EXPECT_EQ(edge.filter, cl_filter_mode(CL_FILTER_LINEAR));
  EXPECT_FALSE(edge.normalizedCoords);
  const wrapper::ArgSpec repeat = wrapper::parseArgSpec("sampler:repeat:nearest:normalized");
  EXPECT_EQ(repeat.addressing, cl_addressing_mode(CL_ADDRESS_REPEAT));
  EXPECT_TRUE(repeat.normalizedCoords);
  // Names in any case, as OpenCL spells its constants.
  const wrapper::ArgSpec upper = wrapper::parseArgSpec("image:R/FLOAT:8");
  EXPECT_EQ(upper.format.image_channel_order, cl_channel_order(CL_R));
  EXPECT_EQ(upper.format.image_channel_data_type, cl_channel_type(CL_FLOAT));
  EXPECT_EQ(upper.type, "float");
  const wrapper::ArgSpec upperSampler = wrapper::parseArgSpec("sampler:CLAMP_TO_EDGE:Linear");
  EXPECT_EQ(upperSampler.addressing, cl_addressing_mode(CL_ADDRESS_CLAMP_TO_EDGE));
  EXPECT_EQ(upperSampler.filter, cl_filter_mode(CL_FILTER_LINEAR));

  auto message = [](const std::string& spec) { return messageOf<std::invalid_argument>([&] { wrapper::parseArgSpec(spec); }); };
  EXPECT_EQ(message("image:rgba/unorm_int8"), "argument 'image:rgba/unorm_int8': expected image:ORDER/TYPE:WIDTH[xHEIGHT[xDEPTH]][:INIT]");
  const std::string formats =
      "' (ORDER/TYPE: r, rg, rgba or bgra / float, half_float, unorm_int8, unorm_int16, snorm_int8, snorm_int16, "
      "signed_int8, signed_int16, signed_int32, unsigned_int8, unsigned_int16 or unsigned_int32)";
  EXPECT_EQ(message("image:rgb/float:4"), "argument 'image:rgb/float:4': unknown image format 'rgb/float" + formats);
  EXPECT_EQ(message("image:rgba:4"), "argument 'image:rgba:4': unknown image format 'rgba" + formats);
  EXPECT_EQ(message("image:r/float:4x0"), "argument 'image:r/float:4x0': image sizes must be > 0");
  EXPECT_EQ(message("image:r/float:4x4x4x4"), "argument 'image:r/float:4x4x4x4': an image has at most 3 sizes (WIDTHxHEIGHTxDEPTH)");
  EXPECT_EQ(message("image:r/float:4xy"), "argument 'image:r/float:4xy': image size 'y' is not a non-negative integer");
  EXPECT_EQ(message("image:rgba/float:4294967296x4294967296"),
            "argument 'image:rgba/float:4294967296x4294967296': the image is more than 2^64 bytes");
  EXPECT_EQ(message("image:r/unsigned_int8:4:fill:256"), "argument 'image:r/unsigned_int8:4:fill:256': value '256' does not fit in uchar");
  EXPECT_EQ(message("sampler:clamp"), "argument 'sampler:clamp': expected sampler:ADDRESSING:FILTER[:normalized]");
  EXPECT_EQ(message("sampler:wrap:nearest"),
            "argument 'sampler:wrap:nearest': unknown addressing mode 'wrap' (none, clamp_to_edge, clamp, repeat, mirrored_repeat)");
  EXPECT_EQ(message("sampler:clamp:cubic"), "argument 'sampler:clamp:cubic': unknown filter mode 'cubic' (nearest, linear)");
  EXPECT_EQ(message("sampler:clamp:nearest:yes"), "argument 'sampler:clamp:nearest:yes': expected normalized after the filter mode, not 'yes'");
  EXPECT_EQ(message("sampler:mirrored_repeat:linear"),
            "argument 'sampler:mirrored_repeat:linear': mirrored_repeat addressing needs normalized coordinates "
            "(sampler:mirrored_repeat:linear:normalized)");

  // Each image parameter takes an image of its dimensions, a sampler parameter a sampler.
  passes::KernelArg image2d{"im", "image2d_t"}, sampler{"s", "sampler_t"}, array{"a", "image2d_array_t"};
  image2d.handle = passes::KernelArg::Handle::Image;
  array.handle = passes::KernelArg::Handle::Image;
  sampler.handle = passes::KernelArg::Handle::Sampler;
  auto check = [](std::vector<std::string> specs, std::vector<passes::KernelArg> params) {
    std::vector<wrapper::ArgSpec> parsed;
    for (const auto& s : specs) parsed.push_back(wrapper::parseArgSpec(s));
    return messageOf<std::invalid_argument>([&] { wrapper::checkArgs(parsed, params); });
  };
  EXPECT_EQ(check({"image:r/float:4x4x4", "sampler:clamp:nearest"}, {image2d, sampler}),
            "argument 0 (image2d_t im): an image2d_t needs image:ORDER/TYPE:WIDTHxHEIGHT");
  EXPECT_EQ(check({"buffer:float:16", "sampler:clamp:nearest"}, {image2d, sampler}),
            "argument 0 (image2d_t im): an image2d_t needs image:ORDER/TYPE:WIDTHxHEIGHT");
  EXPECT_EQ(check({"image:r/float:4x4", "scalar:int:0"}, {image2d, sampler}),
            "argument 1 (sampler_t s): a sampler needs sampler:ADDRESSING:FILTER[:normalized]");
  EXPECT_EQ(check({"image:r/float:4x4"}, {array}),
            "argument 0 (image2d_array_t a): `cltrace run` makes image1d_t, image2d_t and image3d_t images; the C++ "
            "API and `cltrace wrap` pass any image as the program sets it");
  wrapper::checkArgs({wrapper::parseArgSpec("image:r/float:4x4"), wrapper::parseArgSpec("sampler:none:nearest")},
                     {image2d, sampler});
}

// vadd(a, b, c, n) on 64 work-items with the given first argument.
wrapper::RunSpec vaddSpec(const std::string& first) {
  return specOf("vadd.cl", "vadd", NDRange::fromSizes({64}, {64}),
                {first, "buffer:float:64", "buffer:float:64", "scalar:int:64"});
}

TEST(Standalone, UnreadableKernelSourceSaysWhy) {
  EXPECT_EQ(messageOf<std::invalid_argument>([] { wrapper::readKernelSource("/nonexistent/k.cl"); }),
            "cannot open kernel source '/nonexistent/k.cl': No such file or directory");
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { wrapper::readKernelSource(dir); }),
            "kernel source '" + dir + "' is a directory");
}

TEST(Standalone, BufferContentsThatCannotBeMadeNameTheArgument) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(messageOf<std::invalid_argument>([&] { wrapper::runStandalone(vaddSpec("buffer:float:64:file:" + dir), ""); }),
            "argument 'buffer:float:64:file:" + dir + "': '" + dir + "' is a directory, not a file");
  EXPECT_EQ(messageOf<std::invalid_argument>([] { wrapper::runStandalone(vaddSpec("buffer:float:64:file:/nonexistent/x.bin"), ""); }),
            "argument 'buffer:float:64:file:/nonexistent/x.bin': cannot open '/nonexistent/x.bin': No such file or "
            "directory");
  // 2^63 bytes: refused before anything is allocated, as over what a trace addresses (the host
  // memory a buffer under that limit cannot get is e2e cli_errors' case, under a ulimit).
  EXPECT_EQ(messageOf<wrapper::TraceError>([] { wrapper::runStandalone(vaddSpec("buffer:float:2305843009213693952"), ""); }),
            "argument 0 (float* a) is bound to a buffer of 9223372036854775808 bytes; cltrace traces accesses to buffers of at "
            "most 4 GiB - 1");
}

TEST(Standalone, VirtualLayoutPastTwoTo64IsRefusedNotWrapped) {
  wrapper::RunSpec spec = vaddSpec("buffer:float:64");
  const std::string path = tempPath("layout");
  wrapper::LaunchOptions options;
  options.alignment = uint64_t{1} << 62;  // bases 0, 2^62, 2^63: the last buffer ends below 2^64
  wrapper::runStandalone(spec, path, options);
  const WholeTrace t = readWholeTrace(path);
  ASSERT_EQ(t.header.buffers.size(), 3u);
  EXPECT_EQ(t.header.buffers[1].virtualBase, uint64_t{1} << 62);
  EXPECT_EQ(t.header.buffers[2].virtualBase, uint64_t{1} << 63);
  std::filesystem::remove(path);
  options.alignment = uint64_t{1} << 63;  // c would start at 2^64, that is at 0 over a
  try {
    wrapper::runStandalone(spec, path, options);
    ADD_FAILURE() << "a layout past 2^64 was accepted";
  } catch (const wrapper::TraceError& e) {
    EXPECT_STREQ(e.what(), "buffer argument 2 (float* c, 256 bytes) does not fit in the 64-bit virtual address "
                           "space at alignment 9223372036854775808: its base would wrap around past 2^64");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

// A kernel source and its launch manifest in a scratch directory.
class Manifest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("cltrace-manifest-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    spec.sourcePath = (dir_ / "k.cl").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Applies `json` as k.json with nothing given otherwise; the error message, "" for none.
  std::string apply(const std::string& json, bool haveRange = false) {
    std::ofstream((dir_ / "k.json").string()) << json;
    spec = {};
    spec.sourcePath = (dir_ / "k.cl").string();
    const std::string e = messageOf<std::invalid_argument>([&] { wrapper::applyManifest(spec, false, haveRange, false, false); });
    const std::string prefix = "launch manifest " + (dir_ / "k.json").string() + ": ";
    return e.rfind(prefix, 0) == 0 ? e.substr(prefix.size()) : e.empty() ? e : "(no manifest prefix) " + e;
  }

  std::filesystem::path dir_;
  wrapper::RunSpec spec;
};

TEST_F(Manifest, SizesAreNonNegativeIntegersThatFit) {
  const std::string k = R"("kernel": "k", )";
  EXPECT_EQ(apply("{" + k + R"("global": [1024.7], "local": [64]})"), R"("global"[0]: 1024.7 is not a non-negative integer)");
  EXPECT_EQ(apply("{" + k + R"("global": [1024], "local": [64.9]})"), R"("local"[0]: 64.9 is not a non-negative integer)");
  EXPECT_EQ(apply("{" + k + R"("global": [8, -1024], "local": [1, 1]})"), R"("global"[1]: -1024 is not a non-negative integer)");
  EXPECT_EQ(apply("{" + k + R"("global": [1e30], "local": [64]})"), R"("global"[0]: 1e+30 does not fit in 64 bits)");
  EXPECT_EQ(apply("{" + k + R"("global": [64.0], "local": [64]})"), R"("global"[0]: 64.0 is not a non-negative integer)");
  // Past 2^64 - 1 in digits: said in digits, as written.
  EXPECT_EQ(apply("{" + k + R"("global": [18446744073709551616], "local": [64]})"),
            R"("global"[0]: 18446744073709551616 does not fit in 64 bits)");
  EXPECT_EQ(apply("{" + k + R"("global": ["64"], "local": [64]})"), R"("global"[0]: "64" is not a non-negative integer)");
  EXPECT_EQ(apply("{" + k + R"("global": 64, "local": [64]})"), R"("global": must be an array of 1 to 3 sizes, not number)");
  EXPECT_EQ(apply("{" + k + R"("global": [1, 1, 1, 1], "local": [1]})"), R"("global": must be an array of 1 to 3 sizes, not 4 sizes)");
  EXPECT_EQ(apply("{" + k + R"("global": [64], "local": [64, 1]})"), R"("local" has 2 sizes, "global" 1: they need as many)");
  EXPECT_EQ(apply("{" + k + R"("global": [64]})"), R"("global" needs "local" (work-group sizes are not guessed))");
  EXPECT_EQ(apply("{" + k + R"("local": [64]})"), R"("local" needs "global")");
  EXPECT_EQ(apply(R"({"kernel": "k"})"), R"(no "global" and "local", and no NDRange was given)");
  EXPECT_EQ(apply(R"({"kernel": "k"})", true), "");  // the caller has an NDRange
  EXPECT_EQ(apply("{" + k + R"("global": [1099511627776], "local": [1]})"), "");
  EXPECT_EQ(spec.range.global[0], uint64_t{1} << 40);
  // A size that fits but cannot be launched is the manifest's error too.
  EXPECT_EQ(apply("{" + k + R"("global": [18446744073709551615], "local": [1]})"),
            "the NDRange (18446744073709551615 x 1 x 1) has too many work-items to trace (the limit is 2^60)");
  EXPECT_EQ(apply("{" + k + R"("global": [2048], "local": [300]})"),
            "local size 300 does not divide global size 2048 in dimension 0 (cltrace traces uniform work-groups only, "
            "not OpenCL 2.0's non-uniform ones)");
}

TEST_F(Manifest, OffsetIsTheGlobalOffset) {
  EXPECT_EQ(apply(R"({"kernel": "k", "global": [64, 8], "local": [16, 8], "offset": [32, 1]})"), "");
  EXPECT_EQ(spec.range.dims, 2u);
  EXPECT_EQ(spec.range.offset[0], 32u);
  EXPECT_EQ(spec.range.offset[1], 1u);
  EXPECT_EQ(apply(R"({"kernel": "k", "global": [64], "local": [16], "offset": [1, 2]})"),
            R"("offset" has 2 sizes, "global" 1: they need as many)");
  EXPECT_EQ(apply(R"({"kernel": "k", "global": [64], "local": [16], "offset": [0.5]})"),
            R"("offset"[0]: 0.5 is not a non-negative integer)");
}

TEST_F(Manifest, EveryKeyKnownOnceAndOfItsType) {
  const std::string range = R"("global": [64], "local": [64])";
  EXPECT_EQ(apply(R"({"kernel": "k", "globl": [64], )" + range + "}"),
            R"(unknown key "globl" (the keys are kernel, global, local, offset, args, build_options))");
  EXPECT_EQ(apply(R"({"kernel": "k", "kernel": "j", )" + range + "}"), R"(key "kernel" appears twice)");
  // Deep nesting is refused while parsing (printing a value 100000 deep overflowed the stack).
  EXPECT_EQ(apply(R"({"kernel": "k", "local": [64], "global": )" + std::string(100000, '[') +
                  std::string(100000, ']') + "}"),
            "values nested more than 8 deep (a manifest holds names, sizes and lists of them)");
  EXPECT_EQ(apply(R"({"kernel": 5, )" + range + "}"), R"("kernel": must be a string, not number)");
  EXPECT_EQ(apply("{" + range + "}"), R"(no "kernel", and no kernel name was given)");
  EXPECT_EQ(apply(R"({"kernel": "k", "args": ["buffer:int:4", 1], )" + range + "}"), R"("args"[1]: must be a string, not number)");
  EXPECT_EQ(apply(R"({"kernel": "k", "args": "buffer:int:4", )" + range + "}"), R"("args": must be an array of strings, not string)");
  EXPECT_EQ(apply(R"({"kernel": "k", "args": ["buffer:int:4:zeros:1"], )" + range + "}"),
            R"("args"[0]: argument 'buffer:int:4:zeros:1': zeros takes no value, but ':1' follows it)");
  EXPECT_EQ(apply(R"({"kernel": "k", "build_options": "-DX", )" + range + "}"),
            R"("build_options": must be an array of strings, not string)");
  // A NUL spelt in JSON would end the option (or name) as a C string sees it.
  EXPECT_EQ(apply(R"({"kernel": "k", "build_options": ["-DX", "-DN=4\u0000 -DM"], )" + range + "}"),
            R"("build_options"[1]: holds a NUL character (\u0000))");
  EXPECT_EQ(apply(R"({"kernel": "k\u0000x", )" + range + "}"), R"("kernel": holds a NUL character (\u0000))");
  EXPECT_EQ(apply("[1]"), "must be a JSON object, not array");
  EXPECT_EQ(apply(R"({"kernel": "k",)"),
            "parse error at line 1, column 16: syntax error while parsing object key - unexpected end of input; "
            "expected string literal");
  // A key the caller overrides is still checked: the manifest is wrong either way.
  std::ofstream((dir_ / "k.json").string()) << R"({"kernel": "k", "global": [1.5], "local": [1]})";
  EXPECT_NE(messageOf<std::invalid_argument>([&] { wrapper::applyManifest(spec, true, true, true, true); }), "");
  EXPECT_EQ(apply(R"({"kernel": "k", "args": ["buffer:int:4:file:in:1.bin"], "build_options": ["-DN=4"], )" + range + "}"), "");
  EXPECT_EQ(spec.kernel, "k");
  EXPECT_EQ(spec.args.at(0).value, (dir_ / "in:1.bin").string());
  EXPECT_EQ(spec.buildOptions, std::vector<std::string>{"-DN=4"});
}

}  // namespace
