#include "cltrace/wrapper/standalone.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "cltrace/guarded_json.h"
#include "cltrace/input_file.h"

namespace cltrace::wrapper {

namespace {

std::vector<std::string> splitColon(const std::string& s, size_t maxParts) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (parts.size() + 1 < maxParts) {
    size_t colon = s.find(':', start);
    if (colon == std::string::npos) break;
    parts.push_back(s.substr(start, colon - start));
    start = colon + 1;
  }
  parts.push_back(s.substr(start));
  return parts;
}

uint64_t parseCount(const std::string& s, const std::string& what, const std::string& spec) {
  try {
    return parseUnsigned(s);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("argument '" + spec + "': " + what + " " + e.what());
  }
}

// The bytes of `count` elements of `type` (`elementBytes` each); refused past 2^64.
uint64_t bytesOfElements(uint64_t count, const std::string& type, uint64_t elementBytes, const std::string& spec) {
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(count, elementBytes, &bytes))
    throw std::invalid_argument("argument '" + spec + "': " + std::to_string(count) + " elements of " + type + " (" +
                                std::to_string(elementBytes) + " bytes each) are more than 2^64 bytes");
  return bytes;
}

struct ScalarType {
  std::string base;
  uint64_t size = 0;
  bool isFloat = false, isSigned = false;
};

ScalarType baseType(const std::string& type, uint64_t* lanes) {
  static const std::pair<const char*, ScalarType> kTypes[] = {
      {"uchar", {"uchar", 1, false, false}},  {"char", {"char", 1, false, true}},
      {"ushort", {"ushort", 2, false, false}}, {"short", {"short", 2, false, true}},
      {"uint", {"uint", 4, false, false}},    {"int", {"int", 4, false, true}},
      {"ulong", {"ulong", 8, false, false}},  {"long", {"long", 8, false, true}},
      {"float", {"float", 4, true, true}},    {"double", {"double", 8, true, true}},
      {"half", {"half", 2, true, true}},  // IEEE binary16, for vload_half/vstore_half
      {"size_t", {"size_t", 8, false, false}},
  };
  for (const auto& [name, t] : kTypes) {
    std::string n = name;
    if (type.rfind(n, 0) != 0) continue;
    std::string rest = type.substr(n.size());
    if (rest.empty()) {
      *lanes = 1;
      return t;
    }
    if (rest == "2" || rest == "3" || rest == "4" || rest == "8" || rest == "16") {
      *lanes = rest == "3" ? 4 : std::stoull(rest);  // 3-vectors occupy 4 elements
      return t;
    }
  }
  throw std::invalid_argument(type.empty() ? std::string("the type is empty") : "unknown OpenCL type '" + type + "'");
}

// Writes `value` as the scalar type into `out`.
void storeValue(const ScalarType& t, double value, uint8_t* out) {
  auto put = [&](auto v) { std::memcpy(out, &v, sizeof v); };
  if (t.base == "float") put(static_cast<float>(value));
  else if (t.base == "double") put(value);
  else if (t.base == "half") put(static_cast<_Float16>(value));
  else if (t.size == 1) put(static_cast<int8_t>(static_cast<int64_t>(value)));
  else if (t.size == 2) put(static_cast<int16_t>(static_cast<int64_t>(value)));
  else if (t.size == 4) put(static_cast<int32_t>(static_cast<int64_t>(value)));
  else put(static_cast<int64_t>(value));
}

// Writes the number `text` as the scalar type into `out`: integers exactly (range-checked
// for the type's size and signedness), floating point through strtod.
void storeText(const ScalarType& t, const std::string& text, const std::string& spec, uint8_t* out) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("argument '" + spec + "': value '" + text + "' " + why);
  };
  if (text.empty()) throw bad("is not a number");
  auto put = [&](auto v) { std::memcpy(out, &v, sizeof v); };
  if (t.isFloat) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (*end != '\0') throw bad("is not a number");
    if (errno == ERANGE && std::isinf(v)) throw bad("does not fit in " + t.base);  // strtod's overflow
    const double narrowed = t.base == "float"  ? static_cast<double>(static_cast<float>(v))
                            : t.base == "half" ? static_cast<double>(static_cast<_Float16>(v))
                                               : v;
    if (std::isfinite(v) && !std::isfinite(narrowed)) throw bad("does not fit in " + t.base);
    if (t.base == "float") put(static_cast<float>(v));
    else if (t.base == "half") put(static_cast<_Float16>(v));
    else put(v);
    return;
  }
  const unsigned bits = static_cast<unsigned>(t.size * 8);
  // Decimal, or hexadecimal with 0x: a leading zero does not make it octal.
  const size_t digits = text[0] == '-' ? 1 : 0;
  const int base = text.compare(digits, 2, "0x") == 0 || text.compare(digits, 2, "0X") == 0 ? 16 : 10;
  char* end = nullptr;
  errno = 0;
  if (t.isSigned) {
    long long v = std::strtoll(text.c_str(), &end, base);
    if (*end != '\0') throw bad("is not an integer (the argument is " + t.base + ")");
    const long long lo = bits == 64 ? LLONG_MIN : -(1LL << (bits - 1)), hi = bits == 64 ? LLONG_MAX : (1LL << (bits - 1)) - 1;
    if (errno == ERANGE || v < lo || v > hi) throw bad("does not fit in " + t.base);
    if (t.size == 1) put(static_cast<int8_t>(v));
    else if (t.size == 2) put(static_cast<int16_t>(v));
    else if (t.size == 4) put(static_cast<int32_t>(v));
    else put(static_cast<int64_t>(v));
  } else {
    if (text.find('-') != std::string::npos) throw bad("is negative but " + t.base + " is unsigned");
    unsigned long long v = std::strtoull(text.c_str(), &end, base);
    if (*end != '\0') throw bad("is not an integer (the argument is " + t.base + ")");
    const unsigned long long hi = bits == 64 ? ULLONG_MAX : (1ULL << bits) - 1;
    if (errno == ERANGE || v > hi) throw bad("does not fit in " + t.base);
    if (t.size == 1) put(static_cast<uint8_t>(v));
    else if (t.size == 2) put(static_cast<uint16_t>(v));
    else if (t.size == 4) put(static_cast<uint32_t>(v));
    else put(static_cast<uint64_t>(v));
  }
}

// The bytes of a scalar argument of `type` (a scalar or vector type) from `text`: one value
// for every lane, or as many comma-separated values as the vector has lanes.
std::vector<uint8_t> scalarBytes(const std::string& type, const std::string& text, const std::string& spec) {
  uint64_t slots = 1;
  ScalarType t = baseType(type, &slots);
  const uint64_t lanes = type.size() > 1 && type.back() == '3' && type[type.size() - 2] != '1' ? 3 : slots;
  std::vector<std::string> values;
  for (size_t start = 0;;) {
    size_t comma = text.find(',', start);
    values.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (values.size() != 1 && values.size() != lanes)
    throw std::invalid_argument("argument '" + spec + "': " + type + " takes 1 value or " + std::to_string(lanes) +
                                " comma-separated values, " + std::to_string(values.size()) + " given");
  std::vector<uint8_t> bytes(slots * t.size, 0);
  for (uint64_t i = 0; i < lanes; ++i)
    storeText(t, values.size() == 1 ? values[0] : values[i], spec, bytes.data() + i * t.size);
  return bytes;
}

// Zeroed host memory for a buffer's initial contents. A size the host cannot allocate is the
// argument's fault and says so, rather than a bare std::bad_alloc.
std::vector<uint8_t> zeroedBytes(uint64_t bytes, const std::string& where) {
  try {
    return std::vector<uint8_t>(bytes, 0);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {  // over the vector's max_size
  }
  throw std::invalid_argument(where + "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
}

// Fills `data` from the file of a file: initialiser; the file must hold at least as many bytes.
void readInitialFile(const ArgSpec& a, std::vector<uint8_t>& data) {
  auto refuse = [&](const std::string& why) {
    return std::invalid_argument((a.origin.empty() ? "" : a.origin + ": ") + "argument '" + a.text + "': " + why);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(a.value, ec)) throw refuse("'" + a.value + "' is a directory, not a file");
  std::ifstream in;
  const std::string why = openForReading(in, a.value);
  if (!in) throw refuse("cannot open '" + a.value + "'" + why);
  in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(data.size()));
  if (in.bad()) throw refuse("cannot read '" + a.value + "'");
  if (static_cast<uint64_t>(in.gcount()) != data.size())
    throw refuse("file '" + a.value + "' holds fewer than " + std::to_string(data.size()) + " bytes");
}

// `where` names the argument in errors.
std::vector<uint8_t> initialContents(const ArgSpec& a, const std::string& where) {
  uint64_t lanes = 1;
  ScalarType t = baseType(a.type, &lanes);
  uint64_t elements = a.count * lanes;
  std::vector<uint8_t> data = zeroedBytes(elements * t.size, where);
  if (a.init == "zeros") return data;
  if (a.init == "file") {
    readInitialFile(a, data);
    return data;
  }
  std::mt19937_64 rng(a.seed);
  for (uint64_t i = 0; i < elements; ++i) {
    double v = 0;
    if (a.init == "iota") v = static_cast<double>(i);
    else if (a.init == "fill") {
      storeText(t, a.value, a.text, data.data() + i * t.size);
      continue;
    }
    else if (t.isFloat) v = static_cast<double>(rng() >> 11) * 0x1.0p-53;  // [0, 1)
    else v = static_cast<double>(rng() % 100);
    storeValue(t, v, data.data() + i * t.size);
  }
  return data;
}

}  // namespace

std::string lowerCase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

uint64_t parseUnsigned(const std::string& text) {
  if (!text.empty() && text[0] == '-') throw std::invalid_argument("'" + text + "' is negative");
  const bool hex = text.size() > 2 && (text.compare(0, 2, "0x") == 0 || text.compare(0, 2, "0X") == 0);
  const std::string digits = hex ? text.substr(2) : text;
  if (digits.empty() || digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") != std::string::npos)
    throw std::invalid_argument("'" + text + "' is not a non-negative integer");
  errno = 0;
  const uint64_t v = std::strtoull(digits.c_str(), nullptr, hex ? 16 : 10);
  if (errno == ERANGE) throw std::invalid_argument("'" + text + "' does not fit in 64 bits");
  return v;
}

std::string readKernelSource(const std::string& path) {
  if (std::filesystem::is_directory(path)) throw std::invalid_argument("kernel source '" + path + "' is a directory");
  std::ifstream in;
  const std::string why = openForReading(in, path);
  if (!in) throw std::invalid_argument("cannot open kernel source '" + path + "'" + why);
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  // A trace or a binary given by mistake: said here, not as pages of compiler errors quoting it.
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    throw std::invalid_argument("kernel source '" + path + "' is not OpenCL C source: it holds binary data (a NUL byte at offset " +
                                std::to_string(nul) + ")");
  return text;
}

namespace {

struct ClContext {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  ~ClContext() {
    if (queue) clReleaseCommandQueue(queue);
    if (context) clReleaseContext(context);
  }
};

}  // namespace

uint64_t typeSize(const std::string& type) {
  uint64_t lanes = 1;
  return baseType(type, &lanes).size * lanes;
}

namespace {

// A buffer's initialiser, the text after buffer:TYPE:COUNT:, into `a`. zeros and iota take no
// value, random an optional seed, fill and file one value (a file path may itself hold ':').
void parseInitialiser(const std::string& text, ArgSpec& a) {
  const size_t colon = text.find(':');
  a.init = text.substr(0, colon);
  const bool hasValue = colon != std::string::npos;
  const std::string value = hasValue ? text.substr(colon + 1) : std::string();
  auto refuse = [&](const std::string& why) { return std::invalid_argument("argument '" + a.text + "': " + why); };
  const std::string form = a.kind == ArgSpec::Kind::Image ? "image:ORDER/TYPE:SIZES" : "buffer:TYPE:COUNT";
  // Only the first value is the initialiser's: a second would be silently dropped.
  auto oneValue = [&](const std::string& takes) {
    const size_t more = value.find(':');
    if (more != std::string::npos)
      throw refuse(a.init + " takes " + takes + ", but '" + value.substr(more) + "' follows it");
  };
  if (a.init == "zeros" || a.init == "iota") {
    if (hasValue) throw refuse(a.init + " takes no value, but ':" + value + "' follows it");
  } else if (a.init == "random") {
    oneValue("one value (SEED)");
    if (hasValue) a.seed = parseCount(value, "seed", a.text);
  } else if (a.init == "fill") {
    if (!hasValue) throw refuse("expected " + form + ":fill:VALUE");
    oneValue("one value");
    a.value = value;
    uint64_t lanes = 1;
    const ScalarType t = baseType(a.type, &lanes);
    std::vector<uint8_t> one(t.size);
    storeText(t, a.value, a.text, one.data());  // validates the value now
  } else if (a.init == "file") {
    if (!hasValue) throw refuse("expected " + form + ":file:PATH");
    a.value = value;
  } else {
    throw refuse("unknown initialiser '" + a.init + "' (zeros, iota, random[:SEED], fill:VALUE, file:PATH)");
  }
}

// The image formats `run` makes: channel orders (with their channel counts) and channel types
// (with the scalar type their values are stored as), by the names image: specs use.
const std::pair<const char*, std::pair<cl_channel_order, uint64_t>> kImageOrders[] = {
    {"r", {CL_R, 1}}, {"rg", {CL_RG, 2}}, {"rgba", {CL_RGBA, 4}}, {"bgra", {CL_BGRA, 4}}};
const std::pair<const char*, std::pair<cl_channel_type, const char*>> kImageTypes[] = {
    {"float", {CL_FLOAT, "float"}},           {"half_float", {CL_HALF_FLOAT, "half"}},
    {"unorm_int8", {CL_UNORM_INT8, "uchar"}}, {"unorm_int16", {CL_UNORM_INT16, "ushort"}},
    {"snorm_int8", {CL_SNORM_INT8, "char"}},  {"snorm_int16", {CL_SNORM_INT16, "short"}},
    {"signed_int8", {CL_SIGNED_INT8, "char"}}, {"signed_int16", {CL_SIGNED_INT16, "short"}},
    {"signed_int32", {CL_SIGNED_INT32, "int"}}, {"unsigned_int8", {CL_UNSIGNED_INT8, "uchar"}},
    {"unsigned_int16", {CL_UNSIGNED_INT16, "ushort"}}, {"unsigned_int32", {CL_UNSIGNED_INT32, "uint"}}};

// "rgba/unorm_int8" for a format of those names, "" for any other.
std::string imageFormatName(const cl_image_format& f) {
  const char *order = nullptr, *type = nullptr;
  for (const auto& [name, o] : kImageOrders)
    if (o.first == f.image_channel_order) order = name;
  for (const auto& [name, t] : kImageTypes)
    if (t.first == f.image_channel_data_type) type = name;
  return order && type ? std::string(order) + "/" + type : "";
}

// The format and sizes of image:ORDER/TYPE:SIZES into `a`; `a.type` and `a.count` become the
// channel values' type and number, which the initialiser fills as a buffer's elements.
void parseImage(const std::string& format, const std::string& sizes, ArgSpec& a) {
  auto refuse = [&](const std::string& why) { return std::invalid_argument("argument '" + a.text + "': " + why); };
  const size_t slash = format.find('/');
  // Names in any case (R/FLOAT, as OpenCL spells CL_R and CL_FLOAT), as the configuration's.
  const std::string lower = lowerCase(format);
  const std::string order = lower.substr(0, slash), type = slash == std::string::npos ? "" : lower.substr(slash + 1);
  uint64_t channels = 0;
  for (const auto& [name, o] : kImageOrders)
    if (order == name) {
      a.format.image_channel_order = o.first;
      channels = o.second;
    }
  for (const auto& [name, t] : kImageTypes)
    if (type == name) {
      a.format.image_channel_data_type = t.first;
      a.type = t.second;
    }
  if (slash == std::string::npos || channels == 0 || a.type.empty())
    throw refuse("unknown image format '" + format + "' (ORDER/TYPE: r, rg, rgba or bgra / float, half_float, "
                 "unorm_int8, unorm_int16, snorm_int8, snorm_int16, signed_int8, signed_int16, signed_int32, "
                 "unsigned_int8, unsigned_int16 or unsigned_int32)");
  uint64_t values = channels * typeSize(a.type);  // bytes so far, for the overflow check
  size_t start = 0;
  for (a.imageDims = 0;; ++a.imageDims) {
    const size_t x = sizes.find('x', start);
    if (a.imageDims == 3) throw refuse("an image has at most 3 sizes (WIDTHxHEIGHTxDEPTH)");
    const std::string one = sizes.substr(start, x == std::string::npos ? std::string::npos : x - start);
    a.imageSize[a.imageDims] = parseCount(one, "image size", a.text);
    if (a.imageSize[a.imageDims] == 0) throw refuse("image sizes must be > 0");
    if (__builtin_mul_overflow(values, a.imageSize[a.imageDims], &values))
      throw refuse("the image is more than 2^64 bytes");
    if (x == std::string::npos) break;
    start = x + 1;
  }
  ++a.imageDims;
  a.count = channels * a.imageSize[0] * a.imageSize[1] * a.imageSize[2];
}

// Refuses, naming the formats and sizes the device has, an image `a` the device cannot make
// (clCreateImage would only say CL_INVALID_OPERATION or CL_INVALID_IMAGE_SIZE).
void requireImageSupported(cl_context context, cl_device_id device, cl_mem_object_type type, const ArgSpec& a,
                           const std::string& where) {
  cl_uint count = 0;
  check(clGetSupportedImageFormats(context, CL_MEM_READ_WRITE, type, 0, nullptr, &count), "clGetSupportedImageFormats");
  std::vector<cl_image_format> formats(count);
  if (count)
    check(clGetSupportedImageFormats(context, CL_MEM_READ_WRITE, type, count, formats.data(), nullptr),
          "clGetSupportedImageFormats");
  std::string names;
  bool supported = false;
  for (const cl_image_format& f : formats) {
    supported = supported || (f.image_channel_order == a.format.image_channel_order &&
                              f.image_channel_data_type == a.format.image_channel_data_type);
    const std::string name = imageFormatName(f);
    if (!name.empty()) names += (names.empty() ? "" : ", ") + name;
  }
  if (!supported)
    throw std::invalid_argument(where + "the device makes no " + std::to_string(a.imageDims) + "D image of format " +
                                imageFormatName(a.format) + " (it has " + (names.empty() ? "none of run's" : names) +
                                ")");
  auto limit = [&](cl_device_info what) {
    size_t v = 0;
    check(clGetDeviceInfo(device, what, sizeof v, &v, nullptr), "clGetDeviceInfo");
    return static_cast<uint64_t>(v);
  };
  const uint64_t most[3] = {
      limit(a.imageDims == 3 ? CL_DEVICE_IMAGE3D_MAX_WIDTH : CL_DEVICE_IMAGE2D_MAX_WIDTH),
      a.imageDims == 3 ? limit(CL_DEVICE_IMAGE3D_MAX_HEIGHT) : a.imageDims == 2 ? limit(CL_DEVICE_IMAGE2D_MAX_HEIGHT) : 1,
      a.imageDims == 3 ? limit(CL_DEVICE_IMAGE3D_MAX_DEPTH) : 1};
  static const char* kNames[] = {"width", "height", "depth"};
  for (uint32_t d = 0; d < a.imageDims; ++d)
    if (a.imageSize[d] > most[d])
      throw std::invalid_argument(where + "image " + kNames[d] + " " + std::to_string(a.imageSize[d]) +
                                  " is more than the device's " + std::to_string(most[d]));
}

// sampler:ADDRESSING:FILTER[:normalized] (split at ':' into `p`) into `a`.
void parseSampler(const std::vector<std::string>& given, ArgSpec& a) {
  std::vector<std::string> p;
  for (const std::string& part : given) p.push_back(lowerCase(part));
  auto refuse = [&](const std::string& why) { return std::invalid_argument("argument '" + a.text + "': " + why); };
  static const std::pair<const char*, cl_addressing_mode> kModes[] = {
      {"none", CL_ADDRESS_NONE}, {"clamp_to_edge", CL_ADDRESS_CLAMP_TO_EDGE}, {"clamp", CL_ADDRESS_CLAMP},
      {"repeat", CL_ADDRESS_REPEAT}, {"mirrored_repeat", CL_ADDRESS_MIRRORED_REPEAT}};
  bool known = false;
  for (const auto& [name, mode] : kModes)
    if (p[1] == name) {
      a.addressing = mode;
      known = true;
    }
  if (!known)
    throw refuse("unknown addressing mode '" + p[1] + "' (none, clamp_to_edge, clamp, repeat, mirrored_repeat)");
  if (p[2] == "nearest") a.filter = CL_FILTER_NEAREST;
  else if (p[2] == "linear") a.filter = CL_FILTER_LINEAR;
  else throw refuse("unknown filter mode '" + p[2] + "' (nearest, linear)");
  if (p.size() > 3 && p[3] != "normalized") throw refuse("expected normalized after the filter mode, not '" + p[3] + "'");
  a.normalizedCoords = p.size() > 3;
  if (!a.normalizedCoords && (a.addressing == CL_ADDRESS_REPEAT || a.addressing == CL_ADDRESS_MIRRORED_REPEAT))
    throw refuse(p[1] + " addressing needs normalized coordinates (sampler:" + p[1] + ":" + p[2] + ":normalized)");
}

// typeSize of `type` in argument `spec`; an unknown or empty type names the argument and ends
// with `hint`, what the argument's kind takes.
uint64_t elementSizeIn(const std::string& spec, const std::string& type, const std::string& hint) {
  try {
    return typeSize(type);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("argument '" + spec + "': " + e.what() + hint);
  }
}

}  // namespace

ArgSpec parseArgSpec(const std::string& text) {
  ArgSpec a;
  a.text = text;
  const std::string kind = text.substr(0, text.find(':'));
  std::vector<std::string> p;
  auto split = [&](size_t maxParts, size_t needed, const char* form) {
    p = splitColon(text, maxParts);
    if (p.size() < needed) throw std::invalid_argument("argument '" + text + "': expected " + form);
  };
  if (kind == "buffer") {
    split(4, 3, "buffer:TYPE:COUNT[:INIT]");  // the initialiser keeps its ':'s
    a.kind = ArgSpec::Kind::Buffer;
    a.type = p[1];
    // A struct's name is the likeliest unknown type: an array of structs is passed as its bytes.
    const uint64_t elementBytes =
        elementSizeIn(text, a.type,
                      "; a buffer's TYPE is a scalar or vector type (for an array of structs, buffer:uchar:BYTES)");
    a.count = parseCount(p[2], "count", text);
    if (a.count == 0) throw std::invalid_argument("argument '" + text + "': a buffer needs at least one element");
    bytesOfElements(a.count, a.type, elementBytes, text);
    if (p.size() > 3) parseInitialiser(p[3], a);
  } else if (kind == "scalar") {
    split(3, 3, "scalar:TYPE:VALUE");
    a.kind = ArgSpec::Kind::Scalar;
    a.type = p[1];
    // A struct's name is the likeliest unknown type here: say what run can pass.
    elementSizeIn(text, a.type,
                  "; a scalar is one of char, uchar, short, ushort, int, uint, long, ulong, float, double, half, "
                  "size_t, or a vector of 2, 3, 4, 8 or 16 of them. `cltrace run` cannot build a struct passed by "
                  "value; the C++ API and `cltrace wrap` pass it as the program sets it");
    a.value = p[2];
    scalarBytes(a.type, a.value, text);  // validates the value(s) now
  } else if (kind == "local") {
    // local:BYTES, or local:TYPE:COUNT as a buffer's size is written (local:float:64 = local:256).
    split(3, 2, "local:BYTES or local:TYPE:COUNT");
    a.kind = ArgSpec::Kind::Local;
    if (p.size() == 2) {
      a.bytes = parseCount(p[1], "size", text);
    } else {
      const uint64_t elementBytes = elementSizeIn(text, p[1], " (local:BYTES or local:TYPE:COUNT)");
      a.bytes = bytesOfElements(parseCount(p[2], "count", text), p[1], elementBytes, text);
    }
    if (a.bytes == 0) throw std::invalid_argument("argument '" + text + "': local size must be > 0");
  } else if (kind == "image") {
    split(4, 3, "image:ORDER/TYPE:WIDTH[xHEIGHT[xDEPTH]][:INIT]");
    a.kind = ArgSpec::Kind::Image;
    parseImage(p[1], p[2], a);
    if (p.size() > 3) parseInitialiser(p[3], a);
  } else if (kind == "sampler") {
    split(4, 3, "sampler:ADDRESSING:FILTER[:normalized]");
    a.kind = ArgSpec::Kind::Sampler;
    parseSampler(p, a);
  } else {
    throw std::invalid_argument("argument '" + text + "': must start with buffer:, scalar:, local:, image: or sampler:");
  }
  return a;
}

namespace {

// A type name run knows (a scalar or vector of one), not a struct or typedef name.
bool isBuiltinType(const std::string& type) {
  try {
    uint64_t lanes = 1;
    baseType(type, &lanes);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

// Whether values made as `given` read as the same numbers as `expected` (both known types):
// the same scalar kind (integer or floating point) and size, whatever the lanes and signedness.
bool sameNumbers(const std::string& expected, const std::string& given) {
  uint64_t lanes = 1;
  const ScalarType e = baseType(expected, &lanes), g = baseType(given, &lanes);
  return e.isFloat == g.isFloat && e.size == g.size;
}

// size_t is ulong on the devices run traces on.
std::string normalTypeName(const std::string& type) {
  return type.rfind("size_t", 0) == 0 ? "ulong" + type.substr(6) : type;
}

// Dimensions of an image type `run` can make (0: one it cannot).
uint32_t imageDims(const std::string& type) {
  return type == "image1d_t" ? 1 : type == "image2d_t" ? 2 : type == "image3d_t" ? 3 : 0;
}
const char* const kImageSizes[] = {"SIZES", "WIDTH", "WIDTHxHEIGHT", "WIDTHxHEIGHTxDEPTH"};

// The element type of pointer parameter `p` (a typedef's as the type it names); "" if unknown.
std::string pointeeOf(const passes::KernelArg& p) {
  const std::string& base = p.resolvedType();
  return base.size() > 1 && base.back() == '*' ? base.substr(0, base.size() - 1) : "";
}

// The --arg form that parameter `p` takes, with its type filled in where it is a built-in one
// ("buffer:float:COUNT", "scalar:int:VALUE", "local:float:COUNT").
std::string argForm(const passes::KernelArg& p) {
  if (p.handle == passes::KernelArg::Handle::Image)
    return std::string("image:ORDER/TYPE:") + kImageSizes[imageDims(p.type)];
  if (p.handle == passes::KernelArg::Handle::Sampler) return "sampler:ADDRESSING:FILTER";
  if (p.isPointer) {
    const std::string element = pointeeOf(p);
    const bool known = isBuiltinType(element);
    if (p.addressSpace == 3) return known ? "local:" + normalTypeName(element) + ":COUNT" : "local:BYTES";
    return "buffer:" + (known ? normalTypeName(element) : std::string("TYPE")) + ":COUNT";
  }
  if (p.byValueBytes) return "(a struct by value, which run cannot build)";
  const std::string& base = p.resolvedType();
  return "scalar:" + (isBuiltinType(base) ? normalTypeName(base) : std::string("TYPE")) + ":VALUE";
}

}  // namespace

void checkArgs(const std::vector<ArgSpec>& specs, const std::vector<passes::KernelArg>& params,
               ArgSpelling spelling) {
  if (specs.size() != params.size()) {
    // The forms as they would be written where the arguments came from.
    const bool manifest = spelling == ArgSpelling::Manifest;
    std::string list, forms;
    for (const auto& p : params) {
      list += (list.empty() ? "" : ", ") + p.type + " " + p.name;
      if (manifest)
        forms += (forms.empty() ? "[\"" : ", \"") + argForm(p) + "\"";
      else
        forms += " --arg " + argForm(p);
    }
    if (manifest && !forms.empty()) forms = " " + forms + "]";
    throw std::invalid_argument("the kernel takes " + std::to_string(params.size()) + " arguments (" + list +
                                "), " + std::to_string(specs.size()) + " given" +
                                (params.empty() ? "" : "; in order:" + forms));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const ArgSpec& s = specs[i];
    const passes::KernelArg& p = params[i];
    std::string where = "argument " + std::to_string(i) + " (" + p.type + " " + p.name + "): ";
    if (p.handle == passes::KernelArg::Handle::Image) {
      const uint32_t dims = imageDims(p.type);
      if (dims == 0)
        throw std::invalid_argument(where + "`cltrace run` makes image1d_t, image2d_t and image3d_t images; the "
                                            "C++ API and `cltrace wrap` pass any image as the program sets it");
      if (s.kind != ArgSpec::Kind::Image || s.imageDims != dims)
        throw std::invalid_argument(where + "an " + p.type + " needs " + argForm(p));
    } else if (p.handle == passes::KernelArg::Handle::Sampler) {
      if (s.kind != ArgSpec::Kind::Sampler)
        throw std::invalid_argument(where + "a sampler needs sampler:ADDRESSING:FILTER[:normalized]");
    } else if (p.isPointer && p.addressSpace == 3) {
      if (s.kind != ArgSpec::Kind::Local)
        throw std::invalid_argument(where + "a __local pointer needs local:BYTES or local:TYPE:COUNT");
    } else if (p.isPointer) {
      if (s.kind != ArgSpec::Kind::Buffer) throw std::invalid_argument(where + "a pointer needs buffer:TYPE:COUNT");
      // The buffer's contents are made as its TYPE (random floats, iota integers): integers given
      // to floats, or scalars of another size, would be read as other numbers than were made.
      // Vectors of the element (float4 for float*, or float for float4*: a size in other units)
      // and the other signedness keep the numbers. A typedef of a built-in type is checked as
      // that type (kernel_arg_base_type); a pointer to a struct cannot be checked.
      const std::string element = pointeeOf(p);
      if (isBuiltinType(element) && !sameNumbers(element, s.type))
        throw std::invalid_argument(where + "a buffer of " + s.type + ", the kernel's elements are " + element +
                                    " (give buffer:" + element + ":COUNT...)");
    } else if (p.byValueBytes) {
      throw std::invalid_argument(where + "a struct passed by value (" + std::to_string(p.byValueBytes) +
                                  " bytes): `cltrace run` cannot build one; the C++ API and `cltrace wrap` "
                                  "pass it as the program sets it");
    } else {
      if (s.kind != ArgSpec::Kind::Scalar) throw std::invalid_argument(where + "a value needs scalar:TYPE:VALUE");
      // The type must be the kernel's (size_t is ulong here), a typedef's as the type it names.
      const std::string& base = p.resolvedType();
      if (isBuiltinType(base) && normalTypeName(base) != normalTypeName(s.type))
        throw std::invalid_argument(where + "given as " + s.type + ", the kernel expects " + p.type +
                                    (base != p.type ? " (" + base + ")" : ""));
    }
  }
}

std::filesystem::path manifestPath(const std::string& sourcePath) {
  return std::filesystem::path(sourcePath).replace_extension(".json");
}

namespace {

// The keys a launch manifest may hold: a misspelt one would otherwise be ignored unseen.
constexpr const char* kManifestKeys[] = {"kernel", "global", "local", "offset", "args", "build_options"};

// The manifest's top-level object, its keys checked: each known, none twice.
nlohmann::json readManifest(const std::filesystem::path& path) {
  std::ifstream in;
  const std::string why = openForReading(in, path.string());
  if (!in) throw std::invalid_argument("cannot open it" + why);
  // An empty one is most likely a shell's redirection of a report to KERNEL.json, which is where
  // the launch manifest of KERNEL.cl lives.
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) == 0 && !ec)
    throw std::invalid_argument("the file is empty (a launch manifest sits next to its kernel under the same "
                                "name; if `> " + path.filename().string() +
                                "` made it, send the output to another name)");
  // A manifest holds names, sizes and lists of them: two levels.
  constexpr int kMaxDepth = 8;
  nlohmann::json j = parseGuardedJson<nlohmann::json>(
      in, kMaxDepth,
      "values nested more than " + std::to_string(kMaxDepth) + " deep (a manifest holds names, sizes and lists of them)",
      [](const std::string& key) { return "key \"" + key + "\" appears twice"; });
  if (!j.is_object()) throw std::invalid_argument(std::string("must be a JSON object, not ") + j.type_name());
  for (const auto& item : j.items()) {
    if (std::find(std::begin(kManifestKeys), std::end(kManifestKeys), item.key()) == std::end(kManifestKeys)) {
      std::string known;
      for (const char* key : kManifestKeys) known += std::string(known.empty() ? "" : ", ") + key;
      throw std::invalid_argument("unknown key \"" + item.key() + "\" (the keys are " + known + ")");
    }
  }
  return j;
}

std::string manifestString(const nlohmann::json& v, const std::string& where) {
  if (!v.is_string()) throw std::invalid_argument(where + ": must be a string, not " + v.type_name());
  std::string text = v.get<std::string>();
  // JSON can spell one ("\u0000"); a C string (a build option, a kernel name) would end there.
  if (text.find('\0') != std::string::npos) throw std::invalid_argument(where + ": holds a NUL character (\\u0000)");
  return text;
}

// A JSON number as the manifest most likely wrote it: an integer read as a double for being
// past the 64-bit range in digits (18446744073709551616), not as 1.8446744073709552e+19; any
// other number as read (64.0 stays 64.0).
std::string manifestNumberText(const nlohmann::json& v) {
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::floor(d) == d && std::fabs(d) >= 0x1p63 && std::fabs(d) < 1e30) return wholeNumberDigits(d);
  }
  return v.dump();
}

std::vector<std::string> manifestStrings(const nlohmann::json& j, const std::string& key) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_array()) throw std::invalid_argument("\"" + key + "\": must be an array of strings, not " + v.type_name());
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(manifestString(v[i], "\"" + key + "\"[" + std::to_string(i) + "]"));
  return out;
}

// 1 to 3 sizes, each a JSON integer in [0, 2^64): not 64.9 (which get<> would truncate) nor -1.
std::vector<uint64_t> manifestSizes(const nlohmann::json& j, const std::string& key) {
  const nlohmann::json& v = j.at(key);
  if (!v.is_array() || v.empty() || v.size() > 3)
    throw std::invalid_argument("\"" + key + "\": must be an array of 1 to 3 sizes, not " +
                                (v.is_array() ? std::to_string(v.size()) + " sizes" : v.type_name()));
  std::vector<uint64_t> sizes;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = "\"" + key + "\"[" + std::to_string(i) + "]: " + manifestNumberText(v[i]);
    if (v[i].is_number_unsigned()) sizes.push_back(v[i].get<uint64_t>());
    else if (v[i].is_number_float() && v[i].get<double>() >= 0x1p64) throw std::invalid_argument(where + " does not fit in 64 bits");
    else throw std::invalid_argument(where + " is not a non-negative integer");
  }
  return sizes;
}

// The manifest's NDRange: global and local (and offset, when given) with the same number of sizes.
NDRange manifestRange(const nlohmann::json& j) {
  if (!j.contains("global")) {
    for (const char* key : {"local", "offset"})
      if (j.contains(key)) throw std::invalid_argument(std::string("\"") + key + "\" needs \"global\"");
    throw std::invalid_argument("no \"global\" and \"local\", and no NDRange was given");
  }
  const std::vector<uint64_t> global = manifestSizes(j, "global");
  if (!j.contains("local")) throw std::invalid_argument("\"global\" needs \"local\" (work-group sizes are not guessed)");
  const std::vector<uint64_t> local = manifestSizes(j, "local");
  std::vector<uint64_t> offset;
  if (j.contains("offset")) offset = manifestSizes(j, "offset");
  auto sameCount = [&](const char* key, const std::vector<uint64_t>& sizes) {
    if (!sizes.empty() && sizes.size() != global.size())
      throw std::invalid_argument(std::string("\"") + key + "\" has " + std::to_string(sizes.size()) +
                                  " sizes, \"global\" " + std::to_string(global.size()) + ": they need as many");
  };
  sameCount("local", local);
  sameCount("offset", offset);
  return NDRange::fromSizes(global, local, offset);
}

// The manifest's arguments; a file: initialiser names a file next to the manifest, wherever
// cltrace runs.
std::vector<ArgSpec> manifestArgs(const nlohmann::json& j, const std::filesystem::path& path) {
  std::vector<ArgSpec> args;
  const std::vector<std::string> texts = manifestStrings(j, "args");
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string key = "\"args\"[" + std::to_string(i) + "]";
    try {
      args.push_back(parseArgSpec(texts[i]));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(key + ": " + e.what());
    }
    ArgSpec& a = args.back();
    a.origin = "launch manifest " + path.string() + ": " + key;
    if (a.readsFile() && std::filesystem::path(a.value).is_relative())
      a.value = (path.parent_path() / a.value).string();
  }
  return args;
}

}  // namespace

bool applyManifest(RunSpec& spec, bool haveKernel, bool haveRange, bool haveArgs, bool haveOptions) {
  const std::filesystem::path path = manifestPath(spec.sourcePath);
  if (!std::filesystem::exists(path)) return false;
  // As a directory given as a source or a configuration file is (reading one fails obscurely).
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw std::invalid_argument("launch manifest " + path.string() + " is a directory");
  try {
    // Every key is checked, also those the caller's own values override.
    const nlohmann::json j = readManifest(path);
    std::string kernel;
    if (j.contains("kernel")) kernel = manifestString(j["kernel"], "\"kernel\"");
    else if (!haveKernel) throw std::invalid_argument("no \"kernel\", and no kernel name was given");
    std::vector<std::string> options;
    if (j.contains("build_options")) options = manifestStrings(j, "build_options");
    NDRange range;
    if (j.contains("global") || j.contains("local") || j.contains("offset") || !haveRange) {
      range = manifestRange(j);
      validateRange(range);  // local sizes that do not divide the global ones, named with the manifest
    }
    std::vector<ArgSpec> args;
    if (j.contains("args")) args = manifestArgs(j, path);
    if (!haveKernel) spec.kernel = kernel;
    if (!haveOptions && j.contains("build_options")) spec.buildOptions = options;
    if (!haveRange) spec.range = range;
    if (!haveArgs) {
      spec.args = args;
      if (j.contains("args")) spec.argsManifest = path.string();
    }
  } catch (const std::exception& e) {
    throw std::invalid_argument("launch manifest " + path.string() + ": " + jsonErrorText(e));
  }
  return true;
}

RunOutput runStandalone(const RunSpec& spec, const std::string& tracePath,
                        const LaunchOptions& options, cl_device_id device, bool warmUp,
                        const std::function<void(const passes::KernelReport&)>& reportInstrumented) {
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  validateRange(spec.range);
  std::string source = readKernelSource(spec.sourcePath);
  if (!device) device = defaultDevice();
  auto stage = Clock::now();
  passes::InstrumentedKernel instrumented = passes::instrumentSource(
      source, spec.kernel, passes::withSourceDirectory(spec.sourcePath, withDeviceMacros(device, spec.buildOptions)),
      {}, spec.sourcePath);
  try {
    checkArgs(spec.args, instrumented.args,
              spec.argsManifest.empty() ? ArgSpelling::CommandLine : ArgSpelling::Manifest);
  } catch (const std::invalid_argument& e) {
    if (spec.argsManifest.empty()) throw;
    throw std::invalid_argument("launch manifest " + spec.argsManifest + ": \"args\": " + e.what());
  }
  // Where what a global atomic returns steers the kernel, its workgroups run one after another
  // (on PoCL's CPU device), so that no work-item of another workgroup gets in between and the
  // trace is the same every run. (The part is oneComputeUnitOf's, kept for the process.)
  passes::KernelReport& report = instrumented.report;
  if (report.steeredByAtomics()) {
    if (cl_device_id part = oneComputeUnitOf(device)) {
      device = part;
      report.warnings.push_back(tracedOnOneUnitWarning(report.name, " on a part of the device with one compute unit",
                                                       " (as if no other workgroup ran at the same time)"));
    }
  }
  // A file longer than its buffer is likely a count or type mistake: only its first bytes are
  // used (a shorter one is refused when the buffer is filled). An image format the device reads
  // wrongly is said too.
  for (size_t i = 0; i < spec.args.size(); ++i) {
    const ArgSpec& a = spec.args[i];
    std::error_code ec;
    const uint64_t fileBytes = a.readsFile() ? std::filesystem::file_size(a.value, ec) : 0;
    const uint64_t bufferBytes = a.readsFile() ? a.count * typeSize(a.type) : 0;
    if (!ec && fileBytes > bufferBytes)
      report.warnings.push_back("argument " + std::to_string(i) + " '" + a.text + "': file '" + a.value + "' holds " +
                                std::to_string(fileBytes) + " bytes; the " +
                                (a.kind == ArgSpec::Kind::Image ? "image" : "buffer") + " takes its first " +
                                std::to_string(bufferBytes) + " (" + std::to_string(a.count) + " " + a.type + ")");
    if (a.kind == ArgSpec::Kind::Image)
      if (const std::string flaw = imageFormatFlaw(device, a.format); !flaw.empty())
        report.warnings.push_back("argument " + std::to_string(i) + " '" + a.text + "': " + flaw);
  }
  if (reportInstrumented) reportInstrumented(report);
  const std::vector<passes::KernelArg> params = instrumented.args;
  NDRange range = spec.range;
  if (spec.localFromKernel) {
    if (report.requiredLocalSize[0] == 0)
      throw std::invalid_argument("no local size was given, and kernel '" + report.name +
                                  "' has no reqd_work_group_size attribute to take one from (cltrace does not "
                                  "guess work-group sizes: give --local)");
    for (uint32_t d = 0; d < 3; ++d) range.local[d] = d < range.dims ? report.requiredLocalSize[d] : 1;
    validateRange(range);
  }
  // A buffer the trace cannot address is refused before it is made (filled, it took 8.5 GB and
  // seconds before the launch refused it).
  for (size_t i = 0; i < spec.args.size(); ++i)
    if (spec.args[i].kind == ArgSpec::Kind::Buffer)  // parseArgSpec refused a size over 2^64
      requireAddressableBuffer(instrumented.report, i, params[i], spec.args[i].count * typeSize(spec.args[i].type));

  RunOutput out;
  out.instrumentSeconds = since(stage);
  out.report = instrumented.report;
  out.device = describeDevice(device);
  ClContext cl;
  cl_int err = CL_SUCCESS;
  cl.context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
  check(err, "clCreateContext");
  cl.queue = createCommandQueue(cl.context, device);

  std::vector<ArgBinding> bindings;
  std::vector<cl_mem> buffers;
  std::vector<std::vector<uint8_t>> initial;
  struct Release {
    std::vector<cl_mem>& b;
    ~Release() {
      for (cl_mem m : b) clReleaseMemObject(m);
    }
  } release{buffers};
  // Images and samplers: made once, not put back between runs (the kernel reads an image or
  // writes it, the same values each run).
  struct Handles {
    std::vector<cl_mem> images;
    std::vector<cl_sampler> samplers;
    ~Handles() {
      for (cl_mem m : images) clReleaseMemObject(m);
      for (cl_sampler s : samplers) clReleaseSampler(s);
    }
  } handles;
  for (size_t i = 0; i < spec.args.size(); ++i) {
    const ArgSpec& a = spec.args[i];
    const std::string where = "argument " + std::to_string(i) + " (" + params[i].type + " " + params[i].name +
                              ") '" + a.text + "': ";
    if (a.kind == ArgSpec::Kind::Image) {
      cl_image_desc desc{};
      static const cl_mem_object_type kTypes[] = {0, CL_MEM_OBJECT_IMAGE1D, CL_MEM_OBJECT_IMAGE2D, CL_MEM_OBJECT_IMAGE3D};
      desc.image_type = kTypes[a.imageDims];
      requireImageSupported(cl.context, device, desc.image_type, a, where);
      std::vector<uint8_t> pixels = initialContents(a, where);
      desc.image_width = a.imageSize[0];
      desc.image_height = a.imageDims > 1 ? a.imageSize[1] : 0;
      desc.image_depth = a.imageDims > 2 ? a.imageSize[2] : 0;
      cl_mem m = clCreateImage(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &a.format, &desc, pixels.data(), &err);
      check(err, (where + "clCreateImage").c_str());
      handles.images.push_back(m);
      bindings.push_back(ArgBinding::ofImage(m));
      continue;
    }
    if (a.kind == ArgSpec::Kind::Sampler) {
      handles.samplers.push_back(createSampler(cl.context, a.normalizedCoords, a.addressing, a.filter, where + "clCreateSampler"));
      bindings.push_back(ArgBinding::ofSampler(handles.samplers.back()));
      continue;
    }
    if (a.kind == ArgSpec::Kind::Buffer) {
      std::vector<uint8_t> data = initialContents(a, where);
      cl_mem m = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, data.size(),
                                data.data(), &err);
      check(err, (where + "clCreateBuffer").c_str());
      buffers.push_back(m);
      initial.push_back(std::move(data));
      bindings.push_back(ArgBinding::ofBuffer(m));
    } else if (a.kind == ArgSpec::Kind::Local) {
      bindings.push_back(ArgBinding::ofLocal(a.bytes));
    } else {
      std::vector<uint8_t> bytes = scalarBytes(a.type, a.value, a.text);
      bindings.push_back(ArgBinding::ofScalar(bytes.data(), bytes.size()));
    }
  }

  auto restoreInitial = [&] {
    for (size_t i = 0; i < buffers.size(); ++i)
      check(clEnqueueWriteBuffer(cl.queue, buffers[i], CL_TRUE, 0, initial[i].size(), initial[i].data(),
                                 0, nullptr, nullptr),
            "restoring a buffer");
  };
  // The program's own kernel, built from source as a host program would; run by `runOriginal`.
  struct OriginalKernel {
    cl_program program = nullptr;
    cl_kernel kernel = nullptr;
    ~OriginalKernel() {
      if (kernel) clReleaseKernel(kernel);
      if (program) clReleaseProgram(program);
    }
  } original;
  auto runOriginal = [&] {
    if (!original.kernel) {
      const char* text = source.c_str();
      original.program = clCreateProgramWithSource(cl.context, 1, &text, nullptr, &err);
      check(err, "clCreateProgramWithSource");
      std::string opts;
      for (const auto& o : spec.buildOptions) opts += o + " ";
      check(clBuildProgram(original.program, 1, &device, opts.c_str(), nullptr, nullptr),
            "clBuildProgram (original kernel)");
      original.kernel = clCreateKernel(original.program, spec.kernel.c_str(), &err);
      check(err, "clCreateKernel");
      setKernelArgs(original.kernel, bindings, params);
    }
    std::array<size_t, 3> g{}, l{}, o{};
    for (int d = 0; d < 3; ++d) {
      g[d] = range.global[d];
      l[d] = range.local[d];
      o[d] = range.offset[d];
    }
    check(clEnqueueNDRangeKernel(cl.queue, original.kernel, range.dims, o.data(), g.data(), l.data(), 0,
                                 nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    check(clFinish(cl.queue), "clFinish");
  };
  if (!tracePath.empty()) {
    stage = Clock::now();
    TracedKernel traced(cl.context, device, std::move(instrumented), deviceBuildOptions(spec.buildOptions));
    out.buildSeconds = since(stage);
    // Where the trace run's writes may differ from the kernel's own (SPIR-V), the buffers are
    // put back after tracing and the kernel itself writes them.
    LaunchOptions launchOptions = options;
    const bool runKernelAfter = !traced.writesExactly() && !launchOptions.restoreAfterTrace;
    if (runKernelAfter) launchOptions.restoreAfterTrace = true;
    if (warmUp) {
      traced.launch(cl.queue, bindings, range, tracePath, launchOptions);
      restoreInitial();
    }
    stage = Clock::now();
    out.launch = traced.launch(cl.queue, bindings, range, tracePath, launchOptions);
    out.traceSeconds = since(stage);
    if (runKernelAfter) {
      try {
        runOriginal();
      } catch (const std::exception& e) {
        std::error_code ignored;
        std::filesystem::remove(tracePath, ignored);
        throw TraceError(std::string("the kernel itself, run after tracing to write the buffers (the device takes "
                                     "SPIR-V), failed; no trace was kept: ") + e.what());
      }
    }
  } else {
    // The first enqueue compiles for the work-group size; time a second one, started from the
    // same buffer contents so in-place kernels end as after one run.
    auto start = std::chrono::steady_clock::now();
    runOriginal();
    out.firstKernelSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    restoreInitial();
    start = std::chrono::steady_clock::now();
    runOriginal();
    out.kernelSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  for (cl_mem m : buffers) {
    size_t size = 0;
    check(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, nullptr), "clGetMemObjectInfo");
    std::vector<uint8_t> data(size);
    check(clEnqueueReadBuffer(cl.queue, m, CL_TRUE, 0, size, data.data(), 0, nullptr, nullptr),
          "clEnqueueReadBuffer");
    out.buffers.push_back(std::move(data));
  }
  return out;
}

}  // namespace cltrace::wrapper
