#include "tests/support/test_documents.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tests/support/subprocess.h"

namespace fs = std::filesystem;

namespace reel::testing {

std::string DebianPython() {
  return ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

std::string TestDocuments(std::string* why) {
  const fs::path script =
      fs::path(REEL_SOURCE_DIR) / "tests" / "pipeline" / "documents" / "make_documents.py";
  std::ifstream in(script);
  std::stringstream contents;
  contents << in.rdbuf();
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016zx", std::hash<std::string>()(contents.str()));
  const fs::path dir = fs::path(REEL_BINARY_DIR) / "test-documents" / hash;
  if (fs::exists(dir / ".done")) return dir.string();
  for (const char* tool : {"pdftoppm", "pdftotext", "pdfinfo", "img2pdf", "ps2pdf", "qpdf"}) {
    if (RunCommand(std::string("command -v ") + tool).exit_code != 0) {
      if (why) *why = std::string(tool) + " is not installed (scripts/setup installs it)";
      return "";
    }
  }
  if (RunCommand(DebianPython() + " -c 'import cairo'").exit_code != 0) {
    if (why) *why = "python3-cairo is not installed (scripts/setup installs it)";
    return "";
  }
  // flock keeps parallel test processes from making them at once.
  fs::create_directories(dir.parent_path());
  const fs::path tmp = dir.string() + ".tmp";
  CommandResult made =
      RunCommand("flock " + ShellQuote((dir.parent_path() / ".lock").string()) + " sh -c " +
                 ShellQuote("test -f " + ShellQuote((dir / ".done").string()) + " || { rm -rf " +
                            ShellQuote(tmp.string()) + " && " + DebianPython() + " " +
                            ShellQuote(script.string()) + " " + ShellQuote(tmp.string()) +
                            " && rm -rf " + ShellQuote(dir.string()) + " && mv " +
                            ShellQuote(tmp.string()) + " " + ShellQuote(dir.string()) +
                            " && touch " + ShellQuote((dir / ".done").string()) + "; }"));
  if (made.exit_code != 0 || !fs::exists(dir / ".done")) {
    if (why) *why = "make_documents.py failed: " + made.err;
    return "";
  }
  return dir.string();
}

std::vector<std::string> SplitPages(const std::string& text) {
  std::vector<std::string> pages;
  size_t start = 0;
  while (true) {
    const size_t ff = text.find('\f', start);
    if (ff == std::string::npos) {
      if (start < text.size()) pages.push_back(text.substr(start));
      break;
    }
    pages.push_back(text.substr(start, ff - start));
    start = ff + 1;
  }
  return pages;
}

std::string NormalizeSpace(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

namespace {
std::u32string CodePoints(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = n == 1 ? c : c & (0x3F >> (n - 1));
    for (int k = 1; k < n && i + k < s.size(); ++k) cp = (cp << 6) | (s[i + k] & 0x3F);
    out.push_back(cp);
    i += n;
  }
  return out;
}
}  // namespace

double CharacterErrorRate(const std::string& got, const std::string& want) {
  const std::u32string a = CodePoints(NormalizeSpace(got)), b = CodePoints(NormalizeSpace(want));
  if (b.empty()) return a.empty() ? 0 : 1;
  std::vector<size_t> row(a.size() + 1), next(a.size() + 1);
  for (size_t i = 0; i <= a.size(); ++i) row[i] = i;
  for (size_t j = 1; j <= b.size(); ++j) {
    next[0] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      next[i] = std::min({row[i] + 1, next[i - 1] + 1, row[i - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(row, next);
  }
  return static_cast<double>(row[a.size()]) / static_cast<double>(b.size());
}

}  // namespace reel::testing
