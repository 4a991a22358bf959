// The record contract between instrumented kernels and the host.
//
// The trace pass writes records in exactly this layout (little-endian, 48 bytes) into the
// record buffer; the host reads them back without conversion. Change anything here and bump
// kRecordFormatVersion: the passes and the trace file reader check it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cltrace {

inline constexpr uint32_t kRecordFormatVersion = 1;

// Loops deeper than this still run correctly; records inside them carry only the outermost
// kMaxLoopDepth counters and the flag kRecordDepthTruncated.
inline constexpr uint32_t kMaxLoopDepth = 7;
// A loop iteration counter stops here (2^32 - 2): iterations past it share the number.
inline constexpr uint32_t kMaxIterationCounter = 0xFFFFFFFEu;

enum class AccessKind : uint8_t {
  Load = 0,          // global load
  Store = 1,         // global store
  Atomic = 2,        // global atomic read-modify-write (atomicrmw, cmpxchg, OpenCL atomic_*)
  ConstantLoad = 3,  // load from the constant address space
  Barrier = 4,       // barrier / work_group_barrier; flags hold the fence flags
  Fence = 5,         // mem_fence / read_mem_fence / write_mem_fence; flags hold the fence flags
};
inline constexpr uint8_t kAccessKindCount = 6;

// Record flags. The fence bits match CLK_LOCAL_MEM_FENCE / CLK_GLOBAL_MEM_FENCE.
inline constexpr uint8_t kFenceLocal = 1u << 0;
inline constexpr uint8_t kFenceGlobal = 1u << 1;
inline constexpr uint8_t kFenceRead = 1u << 2;   // read_mem_fence
inline constexpr uint8_t kFenceWrite = 1u << 3;  // write_mem_fence
inline constexpr uint8_t kRecordDepthTruncated = 1u << 7;
// Every flag a record (or an instruction of a trace header) may have; readers refuse others.
inline constexpr uint8_t kKnownRecordFlags = kFenceLocal | kFenceGlobal | kFenceRead | kFenceWrite | kRecordDepthTruncated;

struct Record {
  uint64_t address;      // device address (after rebasing: virtual address)
  uint32_t instruction;  // static instruction id, program order, same in both passes
  uint32_t size;         // bytes accessed (0 for barriers and fences)
  uint8_t kind;          // AccessKind
  uint8_t flags;         // kFence* / kRecordDepthTruncated
  uint8_t depth;         // number of enclosing loops (may exceed kMaxLoopDepth when truncated)
  uint8_t reserved;
  uint32_t iterations[kMaxLoopDepth];  // enclosing loop counters, outermost first
};
static_assert(sizeof(Record) == 48, "device record layout is 48 bytes");
static_assert(offsetof(Record, address) == 0);
static_assert(offsetof(Record, instruction) == 8);
static_assert(offsetof(Record, size) == 12);
static_assert(offsetof(Record, kind) == 16);
static_assert(offsetof(Record, flags) == 17);
static_assert(offsetof(Record, depth) == 18);
static_assert(offsetof(Record, iterations) == 20);

inline AccessKind kindOf(const Record& r) { return static_cast<AccessKind>(r.kind); }
inline bool isMemoryAccess(AccessKind k) { return k <= AccessKind::ConstantLoad; }
const char* accessKindName(AccessKind k);

// Count buffer (added by cltrace-count): two 64-bit slots per work-item, indexed by the
// linear global id: [2*id] = packed record units (packed_record.h), [2*id + 1] = diagnostic
// bits below. Bounds buffer (also added by cltrace-count): one 64-bit slot per original kernel
// argument, the byte size of the buffer bound to it or of the __local memory given to it (0 for
// other arguments); the count run performs no access outside every buffer argument, nor outside
// its __local argument, and flags it instead.
inline constexpr uint32_t kCountSlotsPerWorkItem = 2;
inline constexpr uint64_t kDiagDepthTruncated = 1u << 0;  // a record lost loop counters
inline constexpr uint64_t kDiagOutsideBuffers = 1u << 1;  // an access fell outside its buffer
// Bits 4..15: 1 + the lowest __local pointer argument that an access fell outside of (0: none);
// the bounds slot of such an argument holds the bytes of __local memory the host gave it.
inline constexpr uint32_t kDiagLocalArgumentShift = 4;
inline constexpr uint64_t kDiagLocalArgumentMask = 0xfff;
// Bits 32..63: 1 + the lowest instruction id of the work-item's accesses outside their buffer
// (0: none).
inline constexpr uint32_t kDiagFirstOutsideShift = 32;
inline constexpr uint64_t kDiagFirstOutsideMask = ~uint64_t(0) << kDiagFirstOutsideShift;
// Bits 16..31: the launch tag the host put in the bounds buffer after the arguments' sizes
// (slot [original arguments]); a work-item whose slot lacks the launch's tag did not run (a
// device that drops work-items without an error is caught instead of giving zero counts).
inline constexpr uint32_t kDiagLaunchTagShift = 16;
inline constexpr uint64_t kLaunchTagMask = 0xffff;
// The launch tag in a count slot's diagnostics word.
inline constexpr uint64_t launchTagOf(uint64_t diag) { return (diag >> kDiagLaunchTagShift) & kLaunchTagMask; }

// Control buffer (added by cltrace-trace): two 64-bit slots per work-item. The host writes
// [2*id] = first record index, [2*id + 1] = counted length. The kernel overwrites [2*id + 1]
// with the number of records it produced; a value above the counted length means the trace
// run took a different path (records beyond the length were dropped, never written). The host
// puts the launch tag in bits 48..63 of [2*id + 1], above the length; the kernel reads the
// length below them and writes back a plain count, so a tag still there means the work-item
// did not run.
inline constexpr uint32_t kControlTagShift = 48;
inline constexpr uint32_t kControlSlotsPerWorkItem = 2;

// Argument buffer (added by cltrace-trace): one 64-bit slot per original kernel argument;
// work-item 0 stores the device address of every global/constant pointer argument. Then the
// launch's geometry, written by the host: the global offset of dimensions 0..2, then the
// global size of dimensions 0..2. The trace kernel answers get_global_offset, get_global_size,
// get_num_groups and get_group_id from them rather than from the device, so the host may
// enqueue it in slices of work-groups, each with a global offset and size of its own.
// Then one word saying whether the trace run's printf calls print: 1 when the trace run is
// the launch the program sees, 0 when the kernel itself runs again afterwards (the count run
// never prints), so that a kernel's output appears once.
inline constexpr uint32_t kGeometryOffsetSlot = 0;  // after the original arguments' slots
inline constexpr uint32_t kGeometrySizeSlot = 3;
inline constexpr uint32_t kPrintSlot = 6;
inline constexpr uint32_t kLaunchSlots = 7;  // geometry and print word

// Linear global id used to index the buffers above: x fastest, relative to the global offset.
//   id = ((gz - oz) * Gy + (gy - oy)) * Gx + (gx - ox)

}  // namespace cltrace
