// Text (thesis listing 5.3) and CSV writers, format names, writeSchedule.
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>

#include "cltrace/output_file.h"
#include "cltrace/scheduler/output.h"
#include "output_internal.h"

namespace cltrace::sched {

const char* outputFormatName(OutputFormat f) {
  switch (f) {
    case OutputFormat::Binary:
      return "binary";
    case OutputFormat::Text:
      return "text";
    case OutputFormat::Csv:
      return "csv";
  }
  return "unknown";
}

OutputFormat parseOutputFormat(std::string_view name) {
  for (OutputFormat f : {OutputFormat::Binary, OutputFormat::Text, OutputFormat::Csv})
    if (name == outputFormatName(f)) return f;
  throw std::invalid_argument("scheduler: format must be one of binary, text, csv (got '" +
                              std::string(name) + "')");
}

namespace {

// Appends numbers without locale or allocation.
class LineBuffer {
 public:
  void text(std::string_view s) { buf_.append(s.data(), s.size()); }
  void ch(char c) { buf_.push_back(c); }
  void dec(uint64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    buf_.append(tmp, r.ptr);
  }
  void hex(uint64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v, 16);
    for (char* c = tmp; c != r.ptr; ++c)
      if (*c >= 'a' && *c <= 'f') *c = static_cast<char>(*c - 'a' + 'A');
    buf_.append(tmp, r.ptr);
  }
  size_t size() const { return buf_.size(); }
  void flushTo(std::ostream& out) {
    out.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  std::string buf_;
};

class StreamWriter : public StepWriter {
 public:
  StreamWriter(std::ostream& out, std::string name) : out_(&out), name_(std::move(name)) {}
  explicit StreamWriter(const std::string& path)
      : owned_(std::make_unique<std::ofstream>(path)), out_(owned_.get()), name_("'" + path + "'") {
    if (!*owned_) throw ScheduleFileError("cannot create scheduled file " + name_);
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    write([&] {
      buf_.flushTo(*out_);
      out_->flush();
      if (owned_) owned_->close();
    });
    if (out_->fail())
      throw ScheduleFileError("cannot write scheduled file " + name_ +
                              (error_ != 0 ? std::string(": ") + std::strerror(error_) : std::string()));
  }

 protected:
  void maybeFlush() {
    if (buf_.size() >= (1 << 16)) write([&] { buf_.flushTo(*out_); });
  }
  // Runs `io` on the stream, keeping why the first failure failed (the streams do not say; the
  // system call's errno does: "No space left on device").
  template <typename Io>
  void write(Io io) {
    errno = 0;
    const bool failed = out_->fail();
    io();
    if (!failed && out_->fail() && error_ == 0) error_ = errno;
  }

  std::unique_ptr<std::ofstream> owned_;
  std::ostream* out_;
  std::string name_;
  LineBuffer buf_;
  bool closed_ = false;
  int error_ = 0;  // errno of the first failed write, 0 if unknown
};

// First line: "<lane width> <workgroups>"; then one line per memory access:
// "0x<ADDRESS> <R|W|A> <workgroup> <warp> <instruction>". Barriers and fences are left out.
class TextWriter final : public StreamWriter {
 public:
  TextWriter(const std::string& path, const ScheduleInfo& info) : StreamWriter(path) {
    header(info);
  }
  TextWriter(std::ostream& out, const ScheduleInfo& info, std::string name)
      : StreamWriter(out, std::move(name)) {
    header(info);
  }

  void write(const WarpStep& s) override {
    char rw;
    switch (s.kind) {
      case AccessKind::Load:
      case AccessKind::ConstantLoad:
        rw = 'R';
        break;
      case AccessKind::Store:
        rw = 'W';
        break;
      case AccessKind::Atomic:
        rw = 'A';
        break;
      default:
        return;
    }
    for (const LaneAccess& l : s.lanes) {
      buf_.text("0x");
      buf_.hex(l.address);
      buf_.ch(' ');
      buf_.ch(rw);
      buf_.ch(' ');
      buf_.dec(s.workgroup);
      buf_.ch(' ');
      buf_.dec(s.warp);
      buf_.ch(' ');
      buf_.dec(s.instruction);
      buf_.ch('\n');
    }
    maybeFlush();
  }

 private:
  void header(const ScheduleInfo& info) {
    buf_.dec(info.laneWidth);
    buf_.ch(' ');
    buf_.dec(info.workgroupCount);
    buf_.ch('\n');
  }
};

// Header row, then one row per lane of every step (barriers and fences included).
class CsvWriter final : public StreamWriter {
 public:
  explicit CsvWriter(const std::string& path) : StreamWriter(path) { header(); }
  CsvWriter(std::ostream& out, std::string name) : StreamWriter(out, std::move(name)) { header(); }

  void write(const WarpStep& s) override {
    const char* kind = accessKindName(s.kind);
    for (const LaneAccess& l : s.lanes) {
      buf_.dec(s.sm);
      buf_.ch(',');
      buf_.dec(s.cycle);
      buf_.ch(',');
      buf_.dec(s.workgroup);
      buf_.ch(',');
      buf_.dec(s.warp);
      buf_.ch(',');
      buf_.dec(s.step);
      buf_.ch(',');
      buf_.dec(l.localThread);
      buf_.ch(',');
      buf_.dec(s.instruction);
      buf_.ch(',');
      buf_.text(kind);
      buf_.ch(',');
      buf_.dec(l.address);
      buf_.ch(',');
      buf_.dec(l.size);
      buf_.ch('\n');
    }
    maybeFlush();
  }

 private:
  void header() {
    buf_.text("sm,cycle,workgroup,warp,step,thread,instruction,kind,address,size\n");
  }
};

// A writer of a file: destroyed before a successful close (a failed write, a failed source), it
// removes the file if it made it, as the trace writer does (OutputFile).
class FileWriter final : public StepWriter {
 public:
  FileWriter(const std::string& path, OutputFormat format, const ScheduleInfo& info)
      : output_(prepare(path)), inner_(open(format, path, info)) {}

  void write(const WarpStep& step) override { inner_->write(step); }
  void close() override {
    inner_->close();
    output_->keep();
  }

 private:
  static std::unique_ptr<OutputFile> prepare(const std::string& path) {
    try {
      return std::make_unique<OutputFile>(path);
    } catch (const std::runtime_error& e) {
      throw ScheduleFileError("cannot create scheduled file '" + path + "': " + e.what());
    }
  }
  static std::unique_ptr<StepWriter> open(OutputFormat format, const std::string& path,
                                          const ScheduleInfo& info) {
    switch (format) {
      case OutputFormat::Binary:
        return detail::makeBinaryWriter(path, info);
      case OutputFormat::Text:
        return std::make_unique<TextWriter>(path, info);
      case OutputFormat::Csv:
        return std::make_unique<CsvWriter>(path);
    }
    throw std::invalid_argument("scheduler: unknown output format");
  }

  std::unique_ptr<OutputFile> output_;  // declared first: removed after inner_ closed its file
  std::unique_ptr<StepWriter> inner_;
};

}  // namespace

std::unique_ptr<StepWriter> openStepWriter(OutputFormat format, const std::string& path,
                                           const ScheduleInfo& info) {
  return std::make_unique<FileWriter>(path, format, info);
}

std::unique_ptr<StepWriter> makeTextWriter(std::ostream& out, const ScheduleInfo& info) {
  return std::make_unique<TextWriter>(out, info, "<stream>");
}

std::unique_ptr<StepWriter> makeCsvWriter(std::ostream& out, const ScheduleInfo&) {
  return std::make_unique<CsvWriter>(out, "<stream>");
}

uint64_t writeSchedule(StepSource& steps, StepWriter& writer) {
  WarpStep step;
  uint64_t count = 0;
  while (steps.next(step)) {
    writer.write(step);
    ++count;
  }
  writer.close();
  return count;
}

}  // namespace cltrace::sched
