// Parsing small, flat JSON inputs (a cache configuration, a launch manifest) with two guards
// nlohmann's parser lacks. Header-only: the libraries that parse JSON bring nlohmann themselves.
#pragma once

#include <cstdio>
#include <exception>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace cltrace {

// Parses `in` into a `Json` (nlohmann::json), refusing while it parses, with
// std::invalid_argument:
//  - a value nested more than `maxDepth` deep, with the message `tooDeep`: printing or comparing
//    one nested thousands deep recurses off the stack (in an error message, say);
//  - a top-level key given twice, with the message `twice(key)`: the parser would silently keep
//    the last value.
// Syntax errors are nlohmann's own exceptions.
template <typename Json, typename Input, typename TwiceMessage>
Json parseGuardedJson(Input&& in, int maxDepth, const std::string& tooDeep, TwiceMessage twice) {
  std::set<std::string> keys;
  auto guard = [&](int depth, typename Json::parse_event_t event, Json& parsed) {
    if (depth > maxDepth) throw std::invalid_argument(tooDeep);
    if (depth == 1 && event == Json::parse_event_t::key && !keys.insert(parsed.template get<std::string>()).second)
      throw std::invalid_argument(twice(parsed.template get<std::string>()));
    return true;
  };
  return Json::parse(std::forward<Input>(in), guard);
}

// A whole number the parser read as a double (an integer past the 64-bit range, such as
// 18446744073709551616) in decimal digits, as the input most likely wrote it, rather than as
// 1.8446744073709552e+19. For magnitudes below 1e30 (callers quote larger ones as parsed).
inline std::string wholeNumberDigits(double d) {
  char digits[40];
  std::snprintf(digits, sizeof digits, "%.0f", d);
  return digits;
}

// nlohmann's message without its tag ("[json.exception.parse_error.101] "), which says nothing
// to a user: the rest names the problem and where.
inline std::string jsonErrorText(const std::exception& e) {
  std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
    what = what.substr(what.find("] ") + 2);
  return what;
}

}  // namespace cltrace
