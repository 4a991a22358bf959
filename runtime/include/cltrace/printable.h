// Text from the user's input (a name, a value) as a message shows it.
#pragma once

#include <string>

namespace cltrace {

// `text` with its control characters (below 0x20, and 0x7f) as \xNN: printed as they are, they
// would reach the terminal (escape sequences) or cut the message's line.
inline std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += std::string("\\x") + kHex[u >> 4] + kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace cltrace
