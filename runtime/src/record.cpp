#include "cltrace/record.h"

namespace cltrace {

const char* accessKindName(AccessKind k) {
  switch (k) {
    case AccessKind::Load: return "load";
    case AccessKind::Store: return "store";
    case AccessKind::Atomic: return "atomic";
    case AccessKind::ConstantLoad: return "constant_load";
    case AccessKind::Barrier: return "barrier";
    case AccessKind::Fence: return "fence";
  }
  return "unknown";
}

}  // namespace cltrace
