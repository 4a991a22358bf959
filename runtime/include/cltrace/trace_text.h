// Human-readable views of a trace file, for the `cltrace dump` and `cltrace stats` tools.
#pragma once

#include <cstdint>
#include <cstdio>

#include "cltrace/trace_file.h"

namespace cltrace {

// Prints the header, then one line per record in file order: work-item index, workgroup id,
// local id, kind, instruction, address, size, flags and loop iteration counters. Stops after
// `maxRecords` records (UINT64_MAX: all) and says how many were left out. Reading the whole
// trace also checks its end, so a corrupt file throws TraceFileError.
void dumpTrace(TraceReader& reader, std::FILE* out, uint64_t maxRecords = UINT64_MAX);

// Reads the whole trace and prints record counts per kind, per (instruction, kind) and per
// buffer (memory accesses by the buffer whose virtual range holds the address, or "outside").
void printTraceStats(TraceReader& reader, std::FILE* out);

}  // namespace cltrace
