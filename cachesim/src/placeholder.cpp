namespace cltrace::cachesim {}
