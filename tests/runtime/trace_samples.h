// Small traces shared by the runtime tests and the fuzzing seed generator.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "cltrace/trace_file.h"

namespace cltrace::test {

using WorkItems = std::vector<std::vector<Record>>;

Record makeRecord(AccessKind kind, uint32_t instruction, uint64_t address, uint32_t size,
                  uint8_t flags = 0, std::initializer_list<uint32_t> iterations = {});

// 2-D NDRange (4x2, local 2x1, offset 1,0): 8 work-items, 3 of them without records, two
// buffers, every access kind, loop depths 0..2 and one address outside every buffer.
TraceHeader sampleHeader(bool compressed);
WorkItems sampleWorkItems();

// Header size in bytes, from the layout in docs/trace-format.md.
uint64_t headerSizeOf(const TraceHeader& header);

// Writes `workItems` under `header` (whose recordCount is left as given).
void writeTrace(const std::string& path, const TraceHeader& header, const WorkItems& workItems);
// Writes the sample with the right counts.
void writeSample(const std::string& path, bool compressed);

// Format version 2: the sample's NDRange and buffers with nine instructions (every kind, a
// memcpy-sized store and a fence with run-time flags, loop depths 0, 1, 2 and 9) and the
// records they give, one work-item without any.
TraceHeader sampleUnitsHeader(bool compressed);
WorkItems sampleUnitRecords();
// The unit records of `records` under `shapes` (the inverse of UnitRecordDecoder).
std::vector<uint32_t> encodeUnits(const std::vector<InstructionShape>& shapes, const std::vector<Record>& records);
void writeUnitsSample(const std::string& path, bool compressed);

}  // namespace cltrace::test
