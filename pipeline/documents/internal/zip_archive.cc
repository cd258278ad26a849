#include "pipeline/documents/internal/zip_archive.h"

#include <zip.h>

#include <algorithm>

#include "pipeline/documents/internal/text_util.h"

namespace reel::pipeline::documents {

struct ZipArchive::Impl {
  struct Closer {
    void operator()(zip_t* z) const { zip_discard(z); }
  };
  std::unique_ptr<zip_t, Closer> zip;
};

namespace {
struct FileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
}  // namespace

ZipArchive::ZipArchive(std::unique_ptr<Impl> impl, std::vector<std::string> names,
                       DocumentLimits limits, std::string name)
    : impl_(std::move(impl)), names_(std::move(names)), limits_(limits), name_(std::move(name)) {}
ZipArchive::~ZipArchive() = default;

Result<std::unique_ptr<ZipArchive>> ZipArchive::Open(const std::string& path,
                                                     const DocumentLimits& limits,
                                                     const std::string& name) {
  int error = 0;
  auto impl = std::make_unique<Impl>();
  impl->zip.reset(zip_open(path.c_str(), ZIP_RDONLY, &error));
  if (!impl->zip) {
    zip_error_t e;
    zip_error_init_with_code(&e, error);
    std::string why = zip_error_strerror(&e);
    zip_error_fini(&e);
    if (error == ZIP_ER_NOENT) return NotFound(name + ": no such file");
    if (error == ZIP_ER_OPEN || error == ZIP_ER_READ) return IoError(name + ": " + why);
    return CorruptData(name + ": not a readable zip package (" + why + ")");
  }
  const zip_int64_t count = zip_get_num_entries(impl->zip.get(), 0);
  if (count < 0) return CorruptData(name + ": the zip directory cannot be read");
  if (count > limits.max_entries) {
    return LimitExceeded(name + ": the zip package has " + std::to_string(count) +
                         " members, past the limit of " + std::to_string(limits.max_entries));
  }
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(count));
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* n = zip_get_name(impl->zip.get(), static_cast<zip_uint64_t>(i), 0);
    names.emplace_back(n ? n : "");
  }
  return std::unique_ptr<ZipArchive>(
      new ZipArchive(std::move(impl), std::move(names), limits, name));
}

bool ZipArchive::Has(const std::string& member) const {
  return std::find(names_.begin(), names_.end(), member) != names_.end();
}

Result<std::string> ZipArchive::Read(const std::string& member) {
  const std::string where = name_ + ": " + member;
  const zip_int64_t index = zip_name_locate(impl_->zip.get(), member.c_str(), 0);
  if (index < 0) return NotFound(where + ": not in the package");
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(impl_->zip.get(), static_cast<zip_uint64_t>(index), 0, &st) != 0) {
    return CorruptData(where + ": " + zip_strerror(impl_->zip.get()));
  }
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
    return Unsupported(where + ": the member is encrypted");
  }
  std::unique_ptr<zip_file_t, FileCloser> file(
      zip_fopen_index(impl_->zip.get(), static_cast<zip_uint64_t>(index), 0));
  if (!file) return CorruptData(where + ": " + zip_strerror(impl_->zip.get()));
  std::string out;
  if ((st.valid & ZIP_STAT_SIZE) && st.size <= static_cast<zip_uint64_t>(limits_.max_entry_bytes)) {
    out.reserve(static_cast<size_t>(st.size));
  }
  char buffer[1 << 16];
  while (true) {
    const zip_int64_t n = zip_fread(file.get(), buffer, sizeof buffer);
    if (n < 0) return CorruptData(where + ": " + zip_file_strerror(file.get()));
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(out.size()) > limits_.max_entry_bytes) {
      return LimitExceeded(where + ": decompresses to more than " +
                           std::to_string(limits_.max_entry_bytes >> 20) +
                           " MiB (the limit for one member; a zip bomb?)");
    }
    if (total_read_ + static_cast<int64_t>(out.size()) > limits_.max_archive_bytes) {
      return LimitExceeded(name_ + ": the package decompresses to more than " +
                           std::to_string(limits_.max_archive_bytes >> 20) +
                           " MiB (the limit for one file; a zip bomb?)");
    }
  }
  total_read_ += static_cast<int64_t>(out.size());
  return out;
}

std::string ResolveMember(const std::string& base, const std::string& relative) {
  const std::string decoded = PercentDecode(relative.substr(0, relative.find('#')));
  std::string joined;
  if (!decoded.empty() && decoded[0] == '/') {
    joined = decoded.substr(1);
  } else {
    const size_t slash = base.rfind('/');
    joined = (slash == std::string::npos ? "" : base.substr(0, slash + 1)) + decoded;
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= joined.size()) {
    size_t end = joined.find('/', start);
    if (end == std::string::npos) end = joined.size();
    const std::string part = joined.substr(start, end - start);
    if (part == "..") {
      if (parts.empty()) return "";
      parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : "/") + part;
  return out;
}

}  // namespace reel::pipeline::documents
