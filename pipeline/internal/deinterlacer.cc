#include "pipeline/internal/deinterlacer.h"

#include <cstdio>

namespace reel::pipeline::internal {

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
  UniqueFilterGraph graph(avfilter_graph_alloc());
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
  int rc = avfilter_graph_create_filter(&source, avfilter_get_by_name("buffer"), "in", args,
                                        nullptr, graph.get());
  if (rc < 0) return failed("buffer", rc);
  const AVFilter* filter = avfilter_get_by_name("estdif");
  if (filter == nullptr) return Unsupported(path + ": FFmpeg has no estdif filter to deinterlace");
  rc = avfilter_graph_create_filter(&estdif, filter, "deinterlace",
                                    "mode=frame:parity=auto:deint=all", nullptr, graph.get());
  if (rc < 0) return failed("estdif", rc);
  rc = avfilter_graph_create_filter(&sink, avfilter_get_by_name("buffersink"), "out", nullptr,
                                    nullptr, graph.get());
  if (rc < 0) return failed("buffersink", rc);
  if ((rc = avfilter_link(source, 0, estdif, 0)) < 0 ||
      (rc = avfilter_link(estdif, 0, sink, 0)) < 0) {
    return failed("link", rc);
  }
  if ((rc = avfilter_graph_config(graph.get(), nullptr)) < 0) return failed("graph", rc);

  UniqueFrame input(av_frame_clone(frame));
  if (!input) return Internal(path + ": out of memory");
  input->pts = 0;
  if ((rc = av_buffersrc_add_frame(source, input.get())) < 0) return failed("input", rc);
  if ((rc = av_buffersrc_add_frame(source, nullptr)) < 0) return failed("end", rc);
  UniqueFrame output(av_frame_alloc());
  if (!output) return Internal(path + ": out of memory");
  if ((rc = av_buffersink_get_frame(sink, output.get())) < 0) return failed("output", rc);
  return output;
}

}  // namespace reel::pipeline::internal
