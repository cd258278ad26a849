#include "pipeline/internal/deinterlacer.h"

#include <dlfcn.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

extern "C" {
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
}

namespace reel::pipeline::internal {
namespace {

// libavfilter, loaded when the first interlaced picture needs it rather than linked: with its own
// dependencies (about 65 libraries) it was a third of the dynamic loader's work at every start of
// `reel` and of every test process (about 50 ms), for the one filter an interlaced video needs.
struct FilterLibrary {
  decltype(&avfilter_version) version = nullptr;
  decltype(&avfilter_graph_alloc) graph_alloc = nullptr;
  decltype(&avfilter_graph_free) graph_free = nullptr;
  decltype(&avfilter_get_by_name) get_by_name = nullptr;
  decltype(&avfilter_graph_create_filter) graph_create_filter = nullptr;
  decltype(&avfilter_link) link = nullptr;
  decltype(&avfilter_graph_config) graph_config = nullptr;
  decltype(&av_buffersrc_add_frame) buffersrc_add_frame = nullptr;
  decltype(&av_buffersink_get_frame) buffersink_get_frame = nullptr;
};

// The library as this build's headers name it (libavfilter.so.8 for FFmpeg 5.1), loaded once per
// process and kept; its functions, or why it cannot be had.
Result<const FilterLibrary*> LoadFilterLibrary() {
  static std::once_flag once;
  static FilterLibrary library;
  static std::string error;
  std::call_once(once, [] {
    const std::string soname = "libavfilter.so." + std::to_string(LIBAVFILTER_VERSION_MAJOR);
    void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      error = "deinterlacing needs FFmpeg's " + soname + ", which cannot be loaded (" +
              (why != nullptr ? why : "unknown reason") + ")";
      return;
    }
    bool all = true;
    auto find = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
      if (fn == nullptr && all) {
        all = false;
        error = "deinterlacing: " + soname + " has no " + name;
      }
    };
    find(library.version, "avfilter_version");
    find(library.graph_alloc, "avfilter_graph_alloc");
    find(library.graph_free, "avfilter_graph_free");
    find(library.get_by_name, "avfilter_get_by_name");
    find(library.graph_create_filter, "avfilter_graph_create_filter");
    find(library.link, "avfilter_link");
    find(library.graph_config, "avfilter_graph_config");
    find(library.buffersrc_add_frame, "av_buffersrc_add_frame");
    find(library.buffersink_get_frame, "av_buffersink_get_frame");
    if (all && AV_VERSION_MAJOR(library.version()) != LIBAVFILTER_VERSION_MAJOR) {
      all = false;
      error = "deinterlacing: " + soname + " reports version " +
              std::to_string(AV_VERSION_MAJOR(library.version())) + ", built for " +
              std::to_string(LIBAVFILTER_VERSION_MAJOR);
    }
    if (!all) library = FilterLibrary{};  // the handle stays open: a process-wide, one-time cost
  });
  if (library.graph_alloc == nullptr) return Unsupported(error);
  return &library;
}

struct FilterGraphDeleter {
  const FilterLibrary* library;
  void operator()(AVFilterGraph* p) const { library->graph_free(&p); }
};
using UniqueFilterGraph = std::unique_ptr<AVFilterGraph, FilterGraphDeleter>;

}  // namespace

bool IsInterlaced(const AVFrame* frame) { return frame->interlaced_frame != 0; }

Result<UniqueFrame> Deinterlace(const AVFrame* frame, const std::string& path) {
  auto failed = [&](const char* what, int rc) {
    return Internal(path + ": deinterlacing failed (" + what + ": " + AvErrorString(rc) + ")");
  };
  if (frame->width < 3 || frame->height < 4) {
    UniqueFrame copy(av_frame_clone(frame));
    if (!copy) return Internal(path + ": out of memory");
    return copy;
  }
  Result<const FilterLibrary*> loaded = LoadFilterLibrary();
  if (!loaded.ok()) return Unsupported(path + ": " + loaded.status().message());
  const FilterLibrary& av = **loaded;
  UniqueFilterGraph graph(av.graph_alloc(), FilterGraphDeleter{&av});
  if (!graph) return Internal(path + ": out of memory");
  graph->nb_threads = 1;  // decoding threads are the parallelism
  const AVRational sar = frame->sample_aspect_ratio.num > 0 && frame->sample_aspect_ratio.den > 0
                             ? frame->sample_aspect_ratio
                             : AVRational{1, 1};
  char args[160];
  std::snprintf(args, sizeof(args), "video_size=%dx%d:pix_fmt=%d:time_base=1/1:pixel_aspect=%d/%d",
                frame->width, frame->height, frame->format, sar.num, sar.den);
  AVFilterContext* source = nullptr;
  AVFilterContext* estdif = nullptr;
  AVFilterContext* sink = nullptr;
  int rc =
      av.graph_create_filter(&source, av.get_by_name("buffer"), "in", args, nullptr, graph.get());
  if (rc < 0) return failed("buffer", rc);
  const AVFilter* filter = av.get_by_name("estdif");
  if (filter == nullptr) return Unsupported(path + ": FFmpeg has no estdif filter to deinterlace");
  rc = av.graph_create_filter(&estdif, filter, "deinterlace", "mode=frame:parity=auto:deint=all",
                              nullptr, graph.get());
  if (rc < 0) return failed("estdif", rc);
  rc = av.graph_create_filter(&sink, av.get_by_name("buffersink"), "out", nullptr, nullptr,
                              graph.get());
  if (rc < 0) return failed("buffersink", rc);
  if ((rc = av.link(source, 0, estdif, 0)) < 0 || (rc = av.link(estdif, 0, sink, 0)) < 0) {
    return failed("link", rc);
  }
  if ((rc = av.graph_config(graph.get(), nullptr)) < 0) return failed("graph", rc);

  UniqueFrame input(av_frame_clone(frame));
  if (!input) return Internal(path + ": out of memory");
  input->pts = 0;
  if ((rc = av.buffersrc_add_frame(source, input.get())) < 0) return failed("input", rc);
  if ((rc = av.buffersrc_add_frame(source, nullptr)) < 0) return failed("end", rc);
  UniqueFrame output(av_frame_alloc());
  if (!output) return Internal(path + ": out of memory");
  if ((rc = av.buffersink_get_frame(sink, output.get())) < 0) return failed("output", rc);
  return output;
}

}  // namespace reel::pipeline::internal
