// Errors as values.
//
// Every fallible call in Reel returns a Status (no value) or a Result<T> (a value or a Status).
// A Status carries a code, for callers that branch on the kind of failure, and a message written
// for a person: it names the file or item and the reason, e.g. "clip.mp4: truncated file".
// Exceptions never cross a module boundary; assertions are kept for Reel's own bugs.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace reel {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // the caller's input is wrong (bad option, malformed job file)
  kNotFound,         // a path, stream or row that does not exist
  kIoError,          // the operating system failed a read or write
  kCorruptData,      // the bytes are not a valid file of the expected kind
  kUnsupported,      // valid, but Reel cannot handle it (codec, pixel format)
  kLimitExceeded,    // a configured limit was hit (time, size, error rate, dimensions)
  kCancelled,        // stopped on request (signal, interrupt)
  kUnavailable,      // a transient condition; retrying may succeed
  kInternal,         // a bug in Reel
  kDiskFull,         // a write failed for lack of space (ENOSPC, a quota, SQLITE_FULL)
};

const char* ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "code: message", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "prefix: message" (e.g. the file name in front).
  Status WithPrefix(const std::string& prefix) const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
inline Status IoError(std::string m) { return {ErrorCode::kIoError, std::move(m)}; }
inline Status CorruptData(std::string m) { return {ErrorCode::kCorruptData, std::move(m)}; }
inline Status Unsupported(std::string m) { return {ErrorCode::kUnsupported, std::move(m)}; }
inline Status LimitExceeded(std::string m) { return {ErrorCode::kLimitExceeded, std::move(m)}; }
inline Status Cancelled(std::string m) { return {ErrorCode::kCancelled, std::move(m)}; }
inline Status Unavailable(std::string m) { return {ErrorCode::kUnavailable, std::move(m)}; }
inline Status Internal(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }
inline Status DiskFull(std::string m) { return {ErrorCode::kDiskFull, std::move(m)}; }

// A value of type T, or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(data_).ok() && "Result built from an OK status");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(data_);
  }

  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }

  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace reel

#define REEL_CONCAT_INNER_(a, b) a##b
#define REEL_CONCAT_(a, b) REEL_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define REEL_RETURN_IF_ERROR(expr)               \
  do {                                           \
    ::reel::Status reel_status_ = (expr);        \
    if (!reel_status_.ok()) return reel_status_; \
  } while (0)

// `REEL_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from a Result or returns its Status.
#define REEL_ASSIGN_OR_RETURN(lhs, expr) \
  REEL_ASSIGN_OR_RETURN_IMPL_(REEL_CONCAT_(reel_result_, __LINE__), lhs, expr)
#define REEL_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return tmp.status();               \
  lhs = std::move(tmp).value()
