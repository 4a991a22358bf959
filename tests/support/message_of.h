// For the tests: the message of the exception of type E that a call throws.
#pragma once

#include <string>

// The what() of the E that `f()` throws, or "" when it throws none (other exceptions pass).
template <typename E, typename F>
std::string messageOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}
