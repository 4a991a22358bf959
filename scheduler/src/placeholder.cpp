namespace cltrace::sched {}
