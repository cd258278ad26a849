#include "llm/speech/multipart_form.h"

#include <cstdio>
#include <random>

namespace reel::llm {
namespace {

// Field names and file names go into a quoted header parameter: quotes, backslashes and line
// breaks are percent-encoded (as browsers do), so a name cannot end the header.
std::string FormQuoted(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\' || c == '\r' || c == '\n') {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", static_cast<unsigned char>(c));
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void MultipartForm::AddField(std::string name, std::string value) {
  parts_.push_back({std::move(name), "", "", std::move(value)});
}

void MultipartForm::AddFile(std::string name, std::string filename, std::string content_type,
                            std::string data) {
  parts_.push_back(
      {std::move(name), std::move(filename), std::move(content_type), std::move(data)});
}

MultipartForm::Encoded MultipartForm::Encode(unsigned long long seed) const {
  std::mt19937_64 rng(seed);
  std::string boundary;
  while (true) {
    char text[48];
    std::snprintf(text, sizeof(text), "reel-%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    boundary = text;
    bool clash = false;
    for (const Part& p : parts_) clash = clash || p.data.find(boundary) != std::string::npos;
    if (!clash) break;
  }
  Encoded out;
  size_t size = 0;
  for (const Part& p : parts_) size += p.data.size() + 200;
  out.body.reserve(size);
  for (const Part& p : parts_) {
    out.body += "--" + boundary + "\r\n";
    out.body += "Content-Disposition: form-data; name=\"" + FormQuoted(p.name) + "\"";
    if (!p.filename.empty()) out.body += "; filename=\"" + FormQuoted(p.filename) + "\"";
    out.body += "\r\n";
    if (!p.content_type.empty()) out.body += "Content-Type: " + p.content_type + "\r\n";
    out.body += "\r\n";
    out.body += p.data;
    out.body += "\r\n";
  }
  out.body += "--" + boundary + "--\r\n";
  out.content_type = "multipart/form-data; boundary=" + boundary;
  return out;
}

}  // namespace reel::llm
