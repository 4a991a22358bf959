// Where cltrace's own messages go: standard error as it was when first asked. Inside a wrapped
// program (the `wrap` layer, which asks as it starts) a program may close fd 2 and open a file
// of its own in its place; cltrace's lines must not end up in that file.
#pragma once

#include <string>

namespace cltrace::wrapper {

// Takes the copy of standard error now, if not yet taken (later calls keep the first copy).
void keepStandardError();

// Writes `text` and a newline in one write to the copy taken, or to fd 2 while it is still the
// file the copy was taken of; nothing when neither is (standard error was closed, or the copy's
// descriptor was closed and reused by the program).
void writeToStandardError(const std::string& text);

}  // namespace cltrace::wrapper
