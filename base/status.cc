#include "base/status.h"

namespace reel {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "ok";
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kIoError:
      return "I/O error";
    case ErrorCode::kCorruptData:
      return "corrupt data";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kLimitExceeded:
      return "limit exceeded";
    case ErrorCode::kCancelled:
      return "cancelled";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal error";
    case ErrorCode::kDiskFull:
      return "disk full";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(ErrorCodeName(code_)) + ": " + message_;
}

Status Status::WithPrefix(const std::string& prefix) const {
  if (ok()) return *this;
  return Status(code_, prefix + ": " + message_);
}

}  // namespace reel
