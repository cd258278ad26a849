// reel pages FILE [--pages R] [--max-pixels P] [--format png|jpg] -o DIR: page pictures at the
// model's size and pages.json.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

#include "base/file_util.h"
#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/document_options.h"
#include "jobs/cli/number_checks.h"
#include "jobs/json_output.h"
#include "pipeline/documents/document.h"
#include "pipeline/image_codec.h"

namespace reel::cli {
namespace {

struct PagesOptions {
  DocumentCliOptions document;
  std::string out_dir;
  std::string format = "png";
  int quality = 90;
  bool overwrite = false;
};

// page_<digits>.png|jpg and pages.json: the files `reel pages` writes.
bool IsPagesOutput(const std::string& name) {
  if (name == "pages.json") return true;
  const size_t dot = name.rfind('.');
  if (!name.starts_with("page_") || dot == std::string::npos || dot <= 5) return false;
  const std::string extension = name.substr(dot + 1);
  if (extension != "jpg" && extension != "png") return false;
  return std::all_of(name.begin() + 5, name.begin() + static_cast<std::ptrdiff_t>(dot),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// Refuses a folder with files in it unless --overwrite; then removes only Reel's own files.
Status PrepareFolder(const std::string& dir, bool overwrite) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    if (!std::filesystem::is_directory(dir, ec)) return InvalidArgument(dir + ": not a folder");
    int ours = 0, other = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const bool regular = entry.is_regular_file(ec) && !entry.is_symlink(ec);
      ++(regular && IsPagesOutput(entry.path().filename().string()) ? ours : other);
    }
    if (ours + other > 0 && !overwrite) {
      return InvalidArgument(DisplayPath(dir) + " is not empty (" + std::to_string(ours) +
                             " files from an earlier run, " + std::to_string(other) +
                             " other): add --overwrite to replace Reel's files there "
                             "(page_*.png/jpg, pages.json; nothing else is touched), or choose "
                             "an empty folder");
    }
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (!entry.is_regular_file(ec) || entry.is_symlink(ec)) continue;
      if (!IsPagesOutput(entry.path().filename().string())) continue;
      std::filesystem::remove(entry.path(), ec);
      if (ec) return IoError(entry.path().string() + ": cannot remove: " + ec.message());
    }
  }
  return MakeDirectories(dir);
}

int CodePoints(const std::string& text) {
  int n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

int Run(const PagesOptions& o) {
  Result<pipeline::DocumentOptions> options = ToDocumentOptions(o.document);
  if (!options.ok()) {
    std::fprintf(stderr, "reel pages: %s\n", SafeUtf8(options.status().message()).c_str());
    return kExitUsage;
  }
  Status prepared = PrepareFolder(o.out_dir, o.overwrite);
  if (!prepared.ok()) {
    std::fprintf(stderr, "reel pages: %s\n", SafeUtf8(prepared.message()).c_str());
    return prepared.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  const std::string shown = DisplayPath(o.document.file);
  nlohmann::json pages = nlohmann::json::array();
  int pictures = 0;
  auto sink = [&](pipeline::DocumentPage&& page) -> Status {
    nlohmann::json j = {{"page", page.number},
                        {"label", page.label},
                        {"width", page.image.width},
                        {"height", page.image.height},
                        {"characters", CodePoints(page.text)},
                        {"ocr", page.source == pipeline::TextSource::kOcr},
                        {"source", pipeline::TextSourceName(page.source)}};
    if (page.width_pt > 0) {
      j["width_pt"] = page.width_pt;
      j["height_pt"] = page.height_pt;
    }
    if (page.source == pipeline::TextSource::kOcr) j["ocr_confidence"] = page.ocr_confidence;
    if (!page.title.empty()) j["title"] = page.title;
    if (!page.image.empty()) {
      char name[64];
      std::snprintf(name, sizeof(name), "page_%04d.%s", page.number, o.format.c_str());
      REEL_RETURN_IF_ERROR(pipeline::WriteImageFile(
          (std::filesystem::path(o.out_dir) / name).string(), page.image, o.quality));
      j["file"] = name;
      ++pictures;
    }
    if (!page.images.empty()) {
      nlohmann::json images = nlohmann::json::array();
      for (const pipeline::DocumentImage& image : page.images) {
        images.push_back({{"path", DisplayPath(image.path)}, {"alt", image.alt}});
      }
      j["images"] = std::move(images);
    }
    if (!page.error.ok()) {
      j["error"] = SafeUtf8(page.error.message());
      std::fprintf(stderr, "reel pages: %s: %s\n", shown.c_str(),
                   SafeUtf8(page.error.message()).c_str());
    }
    pages.push_back(std::move(j));
    return Status::Ok();
  };
  Result<pipeline::DocumentReport> report = pipeline::ReadDocument(o.document.file, *options, sink);
  // What was read is kept, even when the file failed part way.
  Status written = WriteFileAtomically((std::filesystem::path(o.out_dir) / "pages.json").string(),
                                       jobs::DumpJson(pages, 2) + "\n");
  if (!report.ok()) {
    std::fprintf(stderr, "reel pages: %s\n", SafeUtf8(report.status().message()).c_str());
    return report.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  if (!written.ok()) {
    std::fprintf(stderr, "reel pages: %s\n", SafeUtf8(written.message()).c_str());
    return kExitFailed;
  }
  if (pictures == 0 && report->pages_read > 0 && report->format != pipeline::DocumentFormat::kPdf) {
    std::fprintf(stderr, "reel pages: %s: no page pictures: a %s file has none%s\n", shown.c_str(),
                 pipeline::DocumentFormatName(report->format),
                 o.document.office_render ? "" : " (office files: try --office-render)");
  }
  const int code = ReportDocument("reel pages", shown, *report);
  std::fprintf(stderr, "%s: %d page pictures and pages.json written to %s\n", shown.c_str(),
               pictures, DisplayPath(o.out_dir).c_str());
  return code;
}

}  // namespace

void AddPagesCommand(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<PagesOptions>();
  CLI::App* cmd = app.add_subcommand(
      "pages", "Write a document's page pictures at the model's size, and pages.json");
  cmd->footer(
      "Pages are rendered straight at the size the still-image rule gives (Qwen's smart resize "
      "of the page measured at --dpi, at most --max-pixels). pages.json lists page, label (the "
      "PDF's own page label, \"iv\", when it has labels), width and height (pixels), "
      "characters (of the page's text), ocr (true when the text was read from the picture), "
      "source, and file.\n"
      "Exit status: 0 done, 1 failed, 2 bad options (including an output folder that is not "
      "empty, without --overwrite), 3 partial (some pages failed or were left out).");
  cmd->add_option("FILE", o->document.file, "Document")->required();
  cmd->add_option("-o,--output", o->out_dir, "Folder for the pictures and pages.json")->required();
  AddDocumentOptions(*cmd, o->document, /*pictures=*/true);
  cmd->add_option("--format", o->format, "Picture format")
      ->check(CLI::IsMember({"png", "jpg"}))
      ->default_val("png");
  cmd->add_option("--quality", o->quality, "JPEG quality 1-100")
      ->default_val(90)
      ->check(Between(1, 100));
  cmd->add_flag("--overwrite", o->overwrite,
                "Replace Reel's files (page_*.png/jpg, pages.json) in a folder that has them");
  cmd->callback([o, &exit_code] { exit_code = Run(*o); });
}

}  // namespace reel::cli
