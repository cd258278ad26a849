// Safetensors header parsing (nlohmann's SAX interface, so the header never becomes a DOM and
// every key and value is checked as it is read) and the read-only mapping of the file.

#include "vision/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "base/file_util.h"

namespace reel::vision {
namespace {

struct DTypeEntry {
  const char* name;
  DType dtype;
  size_t size;
};

constexpr DTypeEntry kDTypes[] = {
    {"F32", DType::kF32, 4},        {"F16", DType::kF16, 2},        {"BF16", DType::kBF16, 2},
    {"F64", DType::kF64, 8},        {"I64", DType::kI64, 8},        {"U64", DType::kU64, 8},
    {"I32", DType::kI32, 4},        {"U32", DType::kU32, 4},        {"I16", DType::kI16, 2},
    {"U16", DType::kU16, 2},        {"I8", DType::kI8, 1},          {"U8", DType::kU8, 1},
    {"BOOL", DType::kBool, 1},      {"F8_E4M3", DType::kF8E4M3, 1}, {"F8_E5M2", DType::kF8E5M2, 1},
    {"F8_E8M0", DType::kF8E8M0, 1},
};

const DTypeEntry* FindDType(std::string_view name) {
  for (const DTypeEntry& e : kDTypes) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

// Quotes a name from the file for a message: control characters escaped, long names cut.
std::string Quoted(std::string_view text) {
  std::string out = "'";
  size_t n = std::min<size_t>(text.size(), 200);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > n) out += "...";
  return out + "'";
}

using Json = nlohmann::json;

// Reads the header as a stream of SAX events. The accepted shape is exactly
//   { name: {"dtype": str, "shape": [uint...], "data_offsets": [uint, uint]}, ...,
//     "__metadata__": {str: str, ...} }
// and anything else stops the parse with a message.
class HeaderReader : public nlohmann::json_sax<Json> {
 public:
  explicit HeaderReader(const SafetensorsLimits& limits) : limits_(limits) {}

  std::string error;
  std::vector<TensorInfo> tensors;
  std::vector<std::pair<std::string, std::string>> metadata;

  bool null() override { return Scalar("null"); }
  bool boolean(bool) override { return Scalar("a boolean"); }
  bool number_integer(number_integer_t v) override {
    if (v >= 0) return number_unsigned(static_cast<number_unsigned_t>(v));
    return Scalar("a negative number");
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (state_ == State::kShape) {
      if (current_.shape.size() >= limits_.max_rank) {
        return Fail("tensor " + Quoted(current_.name) + ": more than " +
                    std::to_string(limits_.max_rank) + " dimensions");
      }
      if (v > static_cast<uint64_t>(INT64_MAX)) {
        return Fail("tensor " + Quoted(current_.name) + ": dimension " + std::to_string(v) +
                    " is too large");
      }
      current_.shape.push_back(static_cast<int64_t>(v));
      return true;
    }
    if (state_ == State::kOffsets) {
      if (offsets_seen_ >= 2) {
        return Fail("tensor " + Quoted(current_.name) + ": data_offsets has more than 2 values");
      }
      (offsets_seen_ == 0 ? current_.begin : current_.end) = v;
      ++offsets_seen_;
      return true;
    }
    return Scalar("a number");
  }
  bool number_float(number_float_t, const string_t&) override {
    if (state_ == State::kShape || state_ == State::kOffsets) {
      return Fail("tensor " + Quoted(current_.name) + ": " + FieldName() +
                  " holds a value that is not an integer of at most 64 bits");
    }
    return Scalar("a number");
  }
  bool binary(binary_t&) override { return Scalar("binary data"); }

  bool string(string_t& value) override {
    if (state_ == State::kTensorValue && field_ == Field::kDType) {
      const DTypeEntry* entry = FindDType(value);
      if (entry == nullptr) {
        return Fail("tensor " + Quoted(current_.name) + ": unknown dtype " + Quoted(value));
      }
      current_.dtype = entry->dtype;
      have_dtype_ = true;
      state_ = State::kTensor;
      return true;
    }
    if (state_ == State::kMetadataValue) {
      metadata.emplace_back(std::move(metadata_key_), std::move(value));
      state_ = State::kMetadata;
      return true;
    }
    return Scalar("a string");
  }

  bool start_object(std::size_t) override {
    switch (state_) {
      case State::kStart:
        state_ = State::kTop;
        return true;
      case State::kTopValue:
        if (top_key_ == "__metadata__") {
          state_ = State::kMetadata;
        } else {
          current_ = TensorInfo();
          current_.name = top_key_;
          have_dtype_ = have_shape_ = have_offsets_ = false;
          state_ = State::kTensor;
        }
        return true;
      default:
        return Scalar("an object");
    }
  }

  bool key(string_t& k) override {
    switch (state_) {
      case State::kTop:
        if (k.empty()) return Fail("a tensor has an empty name");
        if (k.size() > limits_.max_name_bytes) {
          return Fail("tensor name " + Quoted(k) + " is longer than " +
                      std::to_string(limits_.max_name_bytes) + " bytes");
        }
        if (!top_keys_.insert(k).second) return Fail("tensor " + Quoted(k) + " appears twice");
        top_key_ = std::move(k);
        state_ = State::kTopValue;
        return true;
      case State::kTensor: {
        bool* seen = nullptr;
        if (k == "dtype") {
          field_ = Field::kDType;
          seen = &have_dtype_;
        } else if (k == "shape") {
          field_ = Field::kShape;
          seen = &have_shape_;
        } else if (k == "data_offsets") {
          field_ = Field::kOffsets;
          seen = &have_offsets_;
        } else {
          return Fail("tensor " + Quoted(current_.name) + ": unknown field " + Quoted(k));
        }
        if (*seen) return Fail("tensor " + Quoted(current_.name) + ": " + k + " appears twice");
        state_ = State::kTensorValue;
        return true;
      }
      case State::kMetadata:
        if (!metadata_keys_.insert(k).second) {
          return Fail("__metadata__: key " + Quoted(k) + " appears twice");
        }
        metadata_key_ = std::move(k);
        state_ = State::kMetadataValue;
        return true;
      default:
        return Fail("unexpected key " + Quoted(k));
    }
  }

  bool end_object() override {
    switch (state_) {
      case State::kTop:
        state_ = State::kDone;
        return true;
      case State::kMetadata:
        state_ = State::kTop;
        return true;
      case State::kTensor:
        if (!have_dtype_ || !have_shape_ || !have_offsets_) {
          return Fail("tensor " + Quoted(current_.name) + ": missing " +
                      (!have_dtype_   ? "dtype"
                       : !have_shape_ ? "shape"
                                      : "data_offsets"));
        }
        tensors.push_back(std::move(current_));
        state_ = State::kTop;
        return true;
      default:
        return Fail("unexpected end of object");
    }
  }

  bool start_array(std::size_t) override {
    if (state_ == State::kTensorValue && field_ == Field::kShape) {
      state_ = State::kShape;
      return true;
    }
    if (state_ == State::kTensorValue && field_ == Field::kOffsets) {
      state_ = State::kOffsets;
      offsets_seen_ = 0;
      return true;
    }
    return Scalar("an array");
  }

  bool end_array() override {
    if (state_ == State::kShape) {
      have_shape_ = true;
      state_ = State::kTensor;
      return true;
    }
    if (state_ == State::kOffsets) {
      if (offsets_seen_ != 2) {
        return Fail("tensor " + Quoted(current_.name) + ": data_offsets must hold 2 values");
      }
      have_offsets_ = true;
      state_ = State::kTensor;
      return true;
    }
    return Fail("unexpected end of array");
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& e) override {
    if (error.empty()) {
      // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column 7:
      // syntax error ..."; keep what follows the bracketed id.
      std::string what = e.what();
      size_t pos = what.find("] ");
      if (pos != std::string::npos) what = what.substr(pos + 2);
      error = "header is not valid JSON (byte " + std::to_string(position) + "): " + what;
    }
    return false;
  }

 private:
  enum class State {
    kStart,
    kTop,
    kTopValue,
    kTensor,
    kTensorValue,
    kShape,
    kOffsets,
    kMetadata,
    kMetadataValue,
    kDone,
  };
  enum class Field { kDType, kShape, kOffsets };

  bool Fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }

  std::string FieldName() const {
    return field_ == Field::kShape ? "shape" : field_ == Field::kOffsets ? "data_offsets" : "dtype";
  }

  // A value of the wrong kind for where it stands.
  bool Scalar(const char* what) {
    switch (state_) {
      case State::kStart:
        return Fail(std::string("header is ") + what + ", not an object");
      case State::kTopValue:
        if (top_key_ == "__metadata__") return Fail(std::string("__metadata__ is ") + what);
        return Fail("tensor " + Quoted(top_key_) + " is " + what + ", not an object");
      case State::kTensorValue:
        return Fail("tensor " + Quoted(current_.name) + ": " + FieldName() + " is " + what);
      case State::kShape:
      case State::kOffsets:
        return Fail("tensor " + Quoted(current_.name) + ": " + FieldName() + " holds " + what);
      case State::kMetadataValue:
        return Fail("__metadata__: " + Quoted(metadata_key_) + " is " + what + ", not a string");
      default:
        return Fail(std::string("unexpected ") + what);
    }
  }

  const SafetensorsLimits& limits_;
  State state_ = State::kStart;
  Field field_ = Field::kDType;
  std::string top_key_;
  std::string metadata_key_;
  std::set<std::string> top_keys_;
  std::set<std::string> metadata_keys_;
  TensorInfo current_;
  bool have_dtype_ = false, have_shape_ = false, have_offsets_ = false;
  int offsets_seen_ = 0;
};

bool MulOverflows(uint64_t a, uint64_t b, uint64_t* out) {
  return __builtin_mul_overflow(a, b, out);
}

// Checks sizes and ranges of parsed tensors against a data buffer of `data_size` bytes.
Status CheckRanges(std::vector<TensorInfo>& tensors, uint64_t data_size, const std::string& name) {
  auto fail = [&](const TensorInfo& t, const std::string& why) {
    return CorruptData(name + ": tensor " + Quoted(t.name) + ": " + why);
  };
  for (TensorInfo& t : tensors) {
    uint64_t elements = 1;
    for (int64_t d : t.shape) {
      if (MulOverflows(elements, static_cast<uint64_t>(d), &elements)) {
        return fail(t, "shape has too many elements (overflow)");
      }
    }
    t.elements = elements;
    uint64_t bytes = 0;
    if (MulOverflows(elements, DTypeSize(t.dtype), &bytes)) {
      return fail(t, "shape has too many bytes (overflow)");
    }
    if (t.end < t.begin) {
      return fail(t, "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                         "] end before they begin");
    }
    if (t.end > data_size) {
      return fail(t, "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                         "] reach past the end of the data (" + std::to_string(data_size) +
                         " bytes)");
    }
    if (t.end - t.begin != bytes) {
      return fail(t, std::to_string(elements) + " " + DTypeName(t.dtype) + " elements need " +
                         std::to_string(bytes) + " bytes, data_offsets give " +
                         std::to_string(t.end - t.begin));
    }
  }
  std::vector<const TensorInfo*> by_offset;
  by_offset.reserve(tensors.size());
  for (const TensorInfo& t : tensors) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t expected = 0;
  const TensorInfo* previous = nullptr;
  for (const TensorInfo* t : by_offset) {
    if (t->begin < expected) {
      return fail(*t, "bytes [" + std::to_string(t->begin) + ", " + std::to_string(t->end) +
                          ") overlap tensor " + Quoted(previous->name));
    }
    if (t->begin > expected) {
      return CorruptData(name + ": bytes [" + std::to_string(expected) + ", " +
                         std::to_string(t->begin) + ") of the data belong to no tensor (before " +
                         Quoted(t->name) + ")");
    }
    expected = t->end;
    previous = t;
  }
  if (expected != data_size) {
    return CorruptData(name + ": the last " + std::to_string(data_size - expected) +
                       " bytes of the data belong to no tensor");
  }
  std::sort(tensors.begin(), tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
  return Status::Ok();
}

}  // namespace

size_t DTypeSize(DType dtype) {
  for (const DTypeEntry& e : kDTypes) {
    if (e.dtype == dtype) return e.size;
  }
  return 1;
}

const char* DTypeName(DType dtype) {
  for (const DTypeEntry& e : kDTypes) {
    if (e.dtype == dtype) return e.name;
  }
  return "?";
}

bool IsFloatDType(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

Result<SafetensorsHeader> ParseSafetensorsHeader(std::span<const uint8_t> prefix,
                                                 uint64_t file_size, const std::string& name,
                                                 const SafetensorsLimits& limits) {
  if (file_size < 8 || prefix.size() < 8) {
    return CorruptData(name + ": " + std::to_string(file_size) +
                       " bytes is too short for a safetensors file (no header length)");
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | prefix[i];
  if (header_size > limits.max_header_bytes) {
    return LimitExceeded(name + ": header of " + std::to_string(header_size) +
                         " bytes is larger than the limit of " +
                         std::to_string(limits.max_header_bytes));
  }
  if (header_size > file_size - 8) {
    return CorruptData(name + ": header of " + std::to_string(header_size) +
                       " bytes reaches past the end of the file (" + std::to_string(file_size) +
                       " bytes)");
  }
  if (prefix.size() < 8 + header_size) {
    return CorruptData(name + ": only " + std::to_string(prefix.size()) +
                       " bytes of the header could be read");
  }
  if (header_size == 0 || prefix[8] != '{') {
    return CorruptData(name + ": header does not start with '{' (not a safetensors file?)");
  }
  const char* begin = reinterpret_cast<const char*>(prefix.data() + 8);
  HeaderReader reader(limits);
  bool ok = false;
  try {
    ok =
        Json::sax_parse(begin, begin + header_size, &reader, nlohmann::detail::input_format_t::json,
                        /*strict=*/true);
  } catch (const std::exception& e) {
    return CorruptData(name + ": header is not valid JSON: " + e.what());
  }
  if (!ok || !reader.error.empty()) {
    return CorruptData(name + ": " +
                       (reader.error.empty() ? "header is not valid JSON" : reader.error));
  }
  SafetensorsHeader header;
  header.tensors = std::move(reader.tensors);
  header.metadata = std::move(reader.metadata);
  header.data_offset = 8 + header_size;
  REEL_RETURN_IF_ERROR(CheckRanges(header.tensors, file_size - header.data_offset, name));
  return header;
}

// ---------------------------------------------------------------------------------------------
// The mapping.

struct SafetensorsFile::Mapping {
  void* address = nullptr;
  size_t size = 0;
  Mapping(void* a, size_t s) : address(a), size(s) {}
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (address != nullptr && address != MAP_FAILED) ::munmap(address, size);
  }
};

namespace {

// Owns a file descriptor.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

SafetensorsFile::SafetensorsFile(std::string path, SafetensorsHeader header,
                                 std::shared_ptr<Mapping> mapping)
    : path_(std::move(path)), header_(std::move(header)), mapping_(std::move(mapping)) {}

Result<SafetensorsFile> SafetensorsFile::Open(const std::string& path,
                                              const SafetensorsLimits& limits) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) {
    int err = errno;
    if (err == ENOENT) return NotFound(path + ": no such file");
    return IoError(path + ": cannot open: " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd.fd, &st) != 0) return IoError(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < 8) {
    return CorruptData(path + ": " + std::to_string(size) +
                       " bytes is too short for a safetensors file (no header length)");
  }
  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (address == MAP_FAILED) return IoError(path + ": cannot map: " + std::strerror(errno));
  auto mapping = std::make_shared<Mapping>(address, size);
  const uint8_t* bytes = static_cast<const uint8_t*>(address);
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | bytes[i];
  uint64_t prefix = std::min<uint64_t>(size, 8 + std::min(header_size, limits.max_header_bytes));
  REEL_ASSIGN_OR_RETURN(SafetensorsHeader header,
                        ParseSafetensorsHeader({bytes, prefix}, size, path, limits));
  return SafetensorsFile(path, std::move(header), std::move(mapping));
}

const TensorInfo* SafetensorsFile::Find(std::string_view name) const {
  auto it = std::lower_bound(header_.tensors.begin(), header_.tensors.end(), name,
                             [](const TensorInfo& t, std::string_view n) { return t.name < n; });
  if (it == header_.tensors.end() || it->name != name) return nullptr;
  return &*it;
}

std::span<const uint8_t> SafetensorsFile::Bytes(const TensorInfo& tensor) const {
  const uint8_t* base = static_cast<const uint8_t*>(mapping_->address) + header_.data_offset;
  return {base + tensor.begin, tensor.bytes()};
}

void SafetensorsFile::Release(const TensorInfo& tensor) const {
  if (tensor.bytes() == 0) return;
  uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t start = reinterpret_cast<uintptr_t>(Bytes(tensor).data());
  uintptr_t stop = start + tensor.bytes();
  start &= ~(page - 1);
  ::madvise(reinterpret_cast<void*>(start), stop - start, MADV_DONTNEED);
}

// ---------------------------------------------------------------------------------------------
// Writing.

Result<std::string> SerializeSafetensors(
    const std::vector<TensorToWrite>& tensors,
    const std::vector<std::pair<std::string, std::string>>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json meta = Json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const TensorToWrite& t : tensors) {
    uint64_t elements = 1;
    for (int64_t d : t.shape) {
      if (d < 0 || MulOverflows(elements, static_cast<uint64_t>(d), &elements)) {
        return InvalidArgument("tensor '" + t.name + "': bad shape");
      }
    }
    if (elements * DTypeSize(t.dtype) != t.bytes.size()) {
      return InvalidArgument("tensor '" + t.name + "': " + std::to_string(t.bytes.size()) +
                             " bytes for " + std::to_string(elements) + " elements of " +
                             DTypeName(t.dtype));
    }
    if (t.name.empty() || t.name == "__metadata__" || header.contains(t.name)) {
      return InvalidArgument("tensor '" + t.name + "': empty, reserved or repeated name");
    }
    header[t.name] = {{"dtype", DTypeName(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + offset);
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += text;
  for (const TensorToWrite& t : tensors) {
    out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
  }
  return out;
}

Status WriteSafetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                        const std::vector<std::pair<std::string, std::string>>& metadata) {
  REEL_ASSIGN_OR_RETURN(std::string bytes, SerializeSafetensors(tensors, metadata));
  return WriteFileAtomically(path, bytes);
}

}  // namespace reel::vision
