#include "llm/context/context_builder.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "llm/context/fit_steps.h"
#include "llm/tokenizer/tokenizer.h"
#include "pipeline/smart_resize.h"

namespace reel::llm {

const char* TransportName(Transport t) {
  switch (t) {
    case Transport::kImages:
      return "images";
    case Transport::kVideo:
      return "video";
    case Transport::kFile:
      return "file";
  }
  return "images";
}

Result<Transport> ParseTransport(const std::string& name) {
  if (name == "images") return Transport::kImages;
  if (name == "video") return Transport::kVideo;
  if (name == "file") return Transport::kFile;
  return InvalidArgument("unknown transport \"" + name + "\" (images, video or file)");
}

const char* FitStepName(FitStep s) {
  switch (s) {
    case FitStep::kDedupe:
      return "dedupe";
    case FitStep::kLowerResolution:
      return "lower_resolution";
    case FitStep::kThinFrames:
      return "thin_frames";
    case FitStep::kShortenText:
      return "shorten_text";
    case FitStep::kSplit:
      return "split";
    case FitStep::kDropPagePictures:
      return "drop_page_pictures";
  }
  return "dedupe";
}

Result<FitStep> ParseFitStep(const std::string& name) {
  for (FitStep s : {FitStep::kDedupe, FitStep::kLowerResolution, FitStep::kThinFrames,
                    FitStep::kShortenText, FitStep::kSplit, FitStep::kDropPagePictures}) {
    if (name == FitStepName(s)) return s;
  }
  return InvalidArgument("unknown fit step \"" + name +
                         "\" (dedupe, lower_resolution, thin_frames, shorten_text, split, "
                         "drop_page_pictures)");
}

namespace {

std::string Seconds1(double s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

// What the server renders, in order: text, or an expanded image / frame pair.
struct Piece {
  enum class Kind { kText, kImage, kVideo } kind = Kind::kText;
  bool media = false;
  std::string text;          // text pieces
  int64_t placeholders = 0;  // media pieces: placeholder tokens (H/28)(W/28)
};

// Counts rendered pieces: the text between media is one chunk to the tokenizer (the media's
// start/end tokens are special tokens, so nothing merges across them).
class PieceCounter {
 public:
  PieceCounter(const ChatTemplate& t, const TokenCounter& counter) : t_(t), counter_(counter) {
    // A media expansion's fixed tokens: its start and end (one each when the tokenizer has them
    // as added tokens, as M3's does), and the cost of one placeholder.
    start_cost_ = Special(t.image_start);
    end_cost_ = Special(t.image_end);
    image_placeholder_cost_ = Special(t.image_placeholder);
    video_placeholder_cost_ = Special(t.video_placeholder);
  }

  TokenBreakdown Count(const std::vector<Piece>& pieces) const {
    TokenBreakdown b;
    std::string chunk;
    int64_t video_text = 0;  // timestamp tokens inside the chunk
    auto flush = [&]() {
      if (chunk.empty()) return;
      int64_t n = counter_.Count(chunk);
      b.video += std::min(video_text, n);
      b.text += n - std::min(video_text, n);
      chunk.clear();
      video_text = 0;
    };
    for (const Piece& p : pieces) {
      if (!p.media) {
        chunk += p.text;
        if (p.kind == Piece::Kind::kVideo) video_text += counter_.Count(p.text);
        continue;
      }
      flush();
      bool video = p.kind == Piece::Kind::kVideo;
      int64_t n = start_cost_ + end_cost_ +
                  p.placeholders * (video ? video_placeholder_cost_ : image_placeholder_cost_);
      (video ? b.video : b.image) += n;
    }
    flush();
    b.total = b.text + b.image + b.video;
    return b;
  }

  int64_t MediaTokens(int64_t placeholders, bool video) const {
    return start_cost_ + end_cost_ +
           placeholders * (video ? video_placeholder_cost_ : image_placeholder_cost_);
  }
  int64_t Text(std::string_view s) const { return counter_.Count(s); }

 private:
  int64_t Special(const std::string& s) const {
    if (s.empty()) return 0;
    if (counter_.tokenizer() != nullptr) {
      if (counter_.tokenizer()->TokenToId(s)) return 1;
      return counter_.Count(s);
    }
    return 1;
  }
  const ChatTemplate& t_;
  const TokenCounter& counter_;
  int64_t start_cost_ = 1, end_cost_ = 1, image_placeholder_cost_ = 1, video_placeholder_cost_ = 1;
};

int64_t Placeholders(int width, int height, int factor) {
  return static_cast<int64_t>(width / factor) * (height / factor);
}

std::string FrameLabel(double t) { return "Frame at " + Seconds1(t) + " s:\n"; }

std::string TimedLine(const ContextText& t) {
  return "[" + Seconds1(t.start_s.value_or(0)) + "-" + Seconds1(t.end_s.value_or(0)) + " s] " +
         t.text + "\n";
}

// A page of a paged document: its marker, then its text (whose lines end with '\n').
std::string PageLine(const ContextText& t) {
  const int64_t page = static_cast<int64_t>(t.start_s.value_or(0));
  std::string line = "Page " + std::to_string(page);
  if (!t.label.empty() && t.label != std::to_string(page)) line += " (label " + t.label + ")";
  line += ":\n" + t.text;
  if (!t.text.empty() && t.text.back() != '\n') line += "\n";
  return line + "\n";
}

std::string DocumentText(const ContextText& t) {
  return "Document (" + t.source + "):\n" + t.text + "\n\n";
}

// Appends text to a segment's parts: to the last part when it is text, else as a new part.
void AppendText(std::string s, std::vector<ContextPart>& parts) {
  if (s.empty()) return;
  if (!parts.empty() && parts.back().kind == ContextPart::Kind::kText) {
    parts.back().text += s;
  } else {
    ContextPart p;
    p.text = std::move(s);
    parts.push_back(std::move(p));
  }
}

// The file name of a path (the context names files by it).
std::string FileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

using fit::Plan;

class Builder {
 public:
  Builder(const ContextInput& in, const ContextOptions& o, const ChatTemplate& t,
          const TokenCounter& c)
      : in_(in), o_(o), t_(t), c_(c), pieces_(t, c) {}

  Result<Context> Build();

 private:
  std::string SystemPrompt() const {
    return o_.system_prompt.empty() ? t_.default_system_prompt : o_.system_prompt;
  }
  std::string Head() const {
    std::string h = t_.prompt_begin;
    if (t_.fixed_system_block) {
      std::string block = t_.identity_text;
      const std::string& line = t_.thinking_line[static_cast<int>(o_.thinking_mode)];
      if (!block.empty() && !line.empty()) block += "\n";
      block += line;
      h += t_.turn_begin + "system" + t_.after_role + block + t_.turn_end;
    }
    std::string system = SystemPrompt();
    if (!system.empty()) h += t_.turn_begin + t_.system_role + t_.after_role + system + t_.turn_end;
    h += t_.turn_begin + t_.user_role + t_.after_role;
    return h;
  }
  std::string Tail() const {
    return t_.turn_end + t_.turn_begin + t_.assistant_role + t_.after_role +
           t_.generation_suffix[static_cast<int>(o_.thinking_mode)];
  }

  // The user turn of a segment: frames [first, last) of plan.frames, timed texts in
  // [from_s, to_s), the documents when `with_documents`.
  std::vector<ContextPart> Parts(const Plan& plan, size_t first, size_t last, double from_s,
                                 double to_s, bool with_documents) const;
  // Renders a segment's parts for counting (with the template around them).
  std::vector<Piece> Render(const std::vector<ContextPart>& parts, const std::string& question,
                            const std::string& padding) const;
  // The padding that ends the prefix (the user turn before the question) on a block boundary,
  // and the prefix's tokens with it; nullopt if none of the tries lands on one.
  std::optional<std::pair<std::string, int64_t>> Align(const std::vector<ContextPart>& parts,
                                                       int64_t* unpadded) const;

  // Planning cost of the whole item in one request under `plan` (near-exact; the final count is
  // exact).
  int64_t Cost(const Plan& plan) const;
  int64_t FramesCost(const Plan& plan, size_t first, size_t last) const;
  // Several files (ContextInput::sources).
  bool files() const { return !in_.sources.empty(); }
  // The heading of file `s` before its frames ("Video 2: b.mp4 (...)", "Image 1: d.png").
  std::string FileHeading(size_t s, bool continued) const;
  // Whether plan position `i` starts its file's frames within a segment starting at `first`,
  // and whether the file began before it (a split's later segment).
  bool StartsFile(const Plan& plan, size_t first, size_t i) const {
    return i == first || in_.frames[plan.frames[i - 1]].source != in_.frames[plan.frames[i]].source;
  }
  bool Continues(const Plan& plan, size_t i) const {
    return i > 0 && in_.frames[plan.frames[i - 1]].source == in_.frames[plan.frames[i]].source;
  }
  // For each timed text (timed_index_ order): the plan position it is written before (the first
  // frame of its file after its start), plan.frames.size() when after every frame.
  std::vector<size_t> LineSlots(const Plan& plan) const;
  std::vector<ContextPart> FileParts(const Plan& plan, size_t first, size_t last,
                                     bool with_documents) const;
  // The documents as the plan has them (maybe shortened), each headed, in input order.
  std::string DocumentsText(const Plan& plan) const;
  // "a.mp4 12.0 s" (a video's frame), "diagram.png" (an image).
  std::string FrameName(const Plan& plan, size_t i) const;

  bool FitsFrameLimit(size_t frames) const {
    return in_.paged || o_.transport != Transport::kVideo || o_.server_num_frames <= 0 ||
           frames <= static_cast<size_t>(o_.server_num_frames);
  }

  // A timed text as written: a page (paged documents) or a timed line.
  std::string Line(const ContextText& t) const { return in_.paged ? PageLine(t) : TimedLine(t); }
  // The size input frame `f` is sent at: the plan's, or for a paged document the page's own
  // size under the plan's lower_resolution max_pixels.
  std::pair<int, int> SizeOf(const Plan& plan, size_t f) const;

  const ContextInput& in_;
  const ContextOptions& o_;
  const ChatTemplate& t_;
  const TokenCounter& c_;
  PieceCounter pieces_;
  std::vector<size_t> document_index_;  // input texts that are documents
  std::vector<size_t> timed_index_;     // input texts that are timed, by start
  int64_t fixed_cost_ = 0;              // head + tail + question
  std::vector<int64_t> timed_cost_;     // by timed_index_ position
};

std::string Builder::DocumentsText(const Plan& plan) const {
  std::string docs;
  for (size_t d = 0; d < document_index_.size(); ++d) {
    ContextText t = in_.texts[document_index_[d]];
    t.text = plan.documents[d];
    docs += DocumentText(t);
  }
  return docs;
}

std::vector<ContextPart> Builder::Parts(const Plan& plan, size_t first, size_t last, double from_s,
                                        double to_s, bool with_documents) const {
  std::vector<ContextPart> parts;
  auto text = [&](std::string s) { AppendText(std::move(s), parts); };
  const std::string docs = with_documents ? DocumentsText(plan) : std::string();
  if (o_.documents_first) text(docs);
  // Timed texts of this range, in start order.
  std::vector<size_t> lines;
  for (size_t k : timed_index_) {
    double s = in_.texts[k].start_s.value_or(0);
    if (s >= from_s && s < to_s) lines.push_back(k);
  }
  size_t next_line = 0;
  auto lines_until = [&](double t) {
    std::string out;
    while (next_line < lines.size() && in_.texts[lines[next_line]].start_s.value_or(0) < t) {
      out += Line(in_.texts[lines[next_line]]);
      ++next_line;
    }
    return out;
  };
  const bool has_frames = last > first;
  if (has_frames && in_.kind == ContextItemKind::kImage) {
    ContextPart p;
    p.kind = ContextPart::Kind::kImage;
    p.frames = {plan.frames[first]};
    p.width = plan.width;
    p.height = plan.height;
    parts.push_back(std::move(p));
  } else if (has_frames && (o_.transport == Transport::kImages || in_.paged)) {
    for (size_t i = first; i < last; ++i) {
      const ContextFrame& f = in_.frames[plan.frames[i]];
      if (in_.paged) {
        text(lines_until(f.time_s + 0.5));  // the page's marker and text, then its picture
      } else {
        text(lines_until(f.time_s));
        text(FrameLabel(f.time_s));
      }
      ContextPart p;
      p.kind = ContextPart::Kind::kImage;
      p.frames = {plan.frames[i]};
      std::tie(p.width, p.height) = SizeOf(plan, plan.frames[i]);
      parts.push_back(std::move(p));
    }
  } else if (has_frames) {
    // One video part; its timed lines before it, with the real time range.
    double a = in_.frames[plan.frames[first]].time_s;
    double b = in_.frames[plan.frames[last - 1]].time_s;
    text(lines_until(to_s));
    text("Video from " + Seconds1(a) + " s to " + Seconds1(b) + " s:\n");
    ContextPart p;
    p.kind = o_.transport == Transport::kFile ? ContextPart::Kind::kVideoFile
                                              : ContextPart::Kind::kVideo;
    for (size_t i = first; i < last; ++i) p.frames.push_back(plan.frames[i]);
    p.width = plan.width;
    p.height = plan.height;
    parts.push_back(std::move(p));
  }
  text(lines_until(1e300));
  if (!o_.documents_first) text(docs);
  return parts;
}

std::string Builder::FileHeading(size_t s, bool continued) const {
  const ContextSource& src = in_.sources[s];
  int ordinal = 0;  // among the files of its kind
  for (size_t k = 0; k <= s; ++k) ordinal += in_.sources[k].kind == src.kind ? 1 : 0;
  const std::string name = FileName(src.path);
  if (src.kind != ContextItemKind::kVideo) {
    return "Image " + std::to_string(ordinal) + ": " + name + "\n";
  }
  if (continued) return "Video " + std::to_string(ordinal) + ": " + name + " (continued)\n";
  return "Video " + std::to_string(ordinal) + ": " + name + " (" + Seconds1(src.duration_s) +
         " s; its frame times are from its start)\n";
}

std::vector<size_t> Builder::LineSlots(const Plan& plan) const {
  std::vector<size_t> slots(timed_index_.size(), plan.frames.size());
  for (size_t k = 0; k < timed_index_.size(); ++k) {
    const ContextText& t = in_.texts[timed_index_[k]];
    std::optional<size_t> last_of_file;
    for (size_t p = 0; p < plan.frames.size(); ++p) {
      const ContextFrame& f = in_.frames[plan.frames[p]];
      if (f.source != t.file) continue;
      last_of_file = p;
      if (f.time_s > t.start_s.value_or(0)) {
        slots[k] = p;
        last_of_file.reset();
        break;
      }
    }
    if (last_of_file) slots[k] = *last_of_file + 1;
  }
  return slots;
}

std::vector<ContextPart> Builder::FileParts(const Plan& plan, size_t first, size_t last,
                                            bool with_documents) const {
  std::vector<ContextPart> parts;
  auto text = [&](std::string s) { AppendText(std::move(s), parts); };
  const std::string docs = with_documents ? DocumentsText(plan) : std::string();
  if (o_.documents_first) text(docs);
  const std::vector<size_t> slots = LineSlots(plan);
  // The timed lines written before position p: of file `source` only, or of every other file.
  auto lines_at = [&](size_t p, size_t source, bool of_source) {
    std::string out;
    for (size_t k = 0; k < slots.size(); ++k) {
      const ContextText& t = in_.texts[timed_index_[k]];
      if (slots[k] == p && (t.file == source) == of_source) out += TimedLine(t);
    }
    return out;
  };
  for (size_t i = first; i < last; ++i) {
    const ContextFrame& f = in_.frames[plan.frames[i]];
    text(lines_at(i, f.source, /*of_source=*/false));  // the end of the file before
    if (StartsFile(plan, first, i)) text(FileHeading(f.source, Continues(plan, i)));
    text(lines_at(i, f.source, /*of_source=*/true));
    if (in_.sources[f.source].kind == ContextItemKind::kVideo) text(FrameLabel(f.time_s));
    ContextPart p;
    p.kind = ContextPart::Kind::kImage;
    p.frames = {plan.frames[i]};
    p.width = plan.sizes[f.source].width;
    p.height = plan.sizes[f.source].height;
    parts.push_back(std::move(p));
  }
  if (last == plan.frames.size()) {
    for (size_t k = 0; k < slots.size(); ++k) {
      if (slots[k] == last) text(TimedLine(in_.texts[timed_index_[k]]));
    }
  }
  if (!o_.documents_first) text(docs);
  return parts;
}

std::string Builder::FrameName(const Plan& plan, size_t i) const {
  const ContextFrame& f = in_.frames[plan.frames[i]];
  const ContextSource& src = in_.sources[f.source];
  return FileName(src.path) +
         (src.kind == ContextItemKind::kVideo ? " " + Seconds1(f.time_s) + " s" : std::string());
}

std::vector<Piece> Builder::Render(const std::vector<ContextPart>& parts,
                                   const std::string& question, const std::string& padding) const {
  std::vector<Piece> out;
  auto text = [&](std::string s, Piece::Kind kind = Piece::Kind::kText) {
    Piece p;
    p.kind = kind;
    p.text = std::move(s);
    out.push_back(std::move(p));
  };
  text(Head());
  for (const ContextPart& part : parts) {
    switch (part.kind) {
      case ContextPart::Kind::kText:
        text(part.text);
        break;
      case ContextPart::Kind::kImage: {
        Piece p;
        p.kind = Piece::Kind::kImage;
        p.media = true;
        p.placeholders = Placeholders(part.width, part.height, o_.resize_factor);
        out.push_back(p);
        break;
      }
      case ContextPart::Kind::kVideo:
      case ContextPart::Kind::kVideoFile: {
        size_t pairs = (part.frames.size() + 1) / 2;
        for (size_t p = 0; p < pairs; ++p) {
          if (part.kind == ContextPart::Kind::kVideoFile) {
            text(t_.Timestamp(in_.frames[part.frames[2 * p]].time_s), Piece::Kind::kVideo);
          } else if (o_.server_timestamps) {
            text(t_.Timestamp(static_cast<double>(2 * p) / o_.server_fps), Piece::Kind::kVideo);
          }
          Piece m;
          m.kind = Piece::Kind::kVideo;
          m.media = true;
          m.placeholders = Placeholders(part.width, part.height, o_.resize_factor);
          out.push_back(m);
        }
        break;
      }
    }
  }
  text(padding + question + Tail());
  return out;
}

std::optional<std::pair<std::string, int64_t>> Builder::Align(const std::vector<ContextPart>& parts,
                                                              int64_t* unpadded) const {
  std::vector<Piece> pieces = Render(parts, "", "");
  Piece& last = pieces.back();
  last.text.resize(last.text.size() - Tail().size());
  // Text after the last image or pair is one chunk with the padding; the rest is counted once.
  size_t media = pieces.size();
  for (size_t i = pieces.size(); i-- > 0;) {
    if (pieces[i].media) {
      media = i;
      break;
    }
  }
  std::vector<Piece> head;
  std::string chunk;
  if (media == pieces.size()) {
    for (const Piece& p : pieces) chunk += p.text;
  } else {
    head.assign(pieces.begin(), pieces.begin() + static_cast<long>(media) + 1);
    for (size_t i = media + 1; i < pieces.size(); ++i) chunk += pieces[i].text;
  }
  const int64_t base = pieces_.Count(head).total;
  auto count = [&](const std::string& pad) { return base + pieces_.Text(chunk + pad); };
  const int64_t block = o_.prefix_block;
  *unpadded = count("");
  if (*unpadded % block == 0) return std::make_pair(std::string(), *unpadded);
  // Padding: k units of " ." and one or two newlines (so the question starts a new piece).
  // The cost of a unit is measured, then the predicted padding checked by an exact count.
  for (const char* end : {"\n", "\n\n"}) {
    int64_t zero = count(end);
    int64_t unit = count(std::string(" .") + end) - zero;
    if (unit <= 0) continue;
    int64_t want = (block - zero % block) % block;
    for (int64_t extra = 0; extra < 3; ++extra) {
      int64_t k = want / unit + extra * block;
      if ((want + extra * block) % unit != 0) k = (want + extra * block) / unit;
      std::string pad;
      for (int64_t i = 0; i < k; ++i) pad += " .";
      pad += end;
      int64_t n = count(pad);
      if (n % block == 0) return std::make_pair(pad, n);
    }
  }
  return std::nullopt;
}

std::pair<int, int> Builder::SizeOf(const Plan& plan, size_t f) const {
  if (!in_.paged) return {plan.width, plan.height};
  const ContextFrame& frame = in_.frames[f];
  if (plan.max_pixels <= 0 || static_cast<int64_t>(frame.width) * frame.height <= plan.max_pixels) {
    return {frame.width, frame.height};
  }
  pipeline::SmartResizeOptions r;
  r.factor = o_.resize_factor;
  r.min_pixels = std::min<int64_t>(3136, plan.max_pixels);
  r.max_pixels = plan.max_pixels;
  r.max_aspect_ratio = o_.max_aspect_ratio;
  auto size = pipeline::SmartResize({frame.width, frame.height}, r);
  if (!size.ok()) return {frame.width, frame.height};
  return {size->width, size->height};
}

int64_t Builder::FramesCost(const Plan& plan, size_t first, size_t last) const {
  if (last <= first) return 0;
  if (in_.paged) {
    int64_t n = 0;
    for (size_t i = first; i < last; ++i) {
      auto [w, h] = SizeOf(plan, plan.frames[i]);
      n += pieces_.MediaTokens(Placeholders(w, h, o_.resize_factor), false);
    }
    return n;
  }
  if (files()) {
    int64_t n = 0;
    for (size_t i = first; i < last; ++i) {
      const ContextFrame& f = in_.frames[plan.frames[i]];
      if (StartsFile(plan, first, i)) n += pieces_.Text(FileHeading(f.source, Continues(plan, i)));
      const FrameSize& size = plan.sizes[f.source];
      n += pieces_.MediaTokens(Placeholders(size.width, size.height, o_.resize_factor), false);
      if (in_.sources[f.source].kind == ContextItemKind::kVideo) {
        n += pieces_.Text(FrameLabel(f.time_s));
      }
    }
    return n;
  }
  int64_t placeholders = Placeholders(plan.width, plan.height, o_.resize_factor);
  if (in_.kind == ContextItemKind::kImage || o_.transport == Transport::kImages) {
    int64_t n = 0;
    for (size_t i = first; i < last; ++i) {
      n += pieces_.MediaTokens(placeholders, false);
      if (in_.kind != ContextItemKind::kImage) {
        n += pieces_.Text(FrameLabel(in_.frames[plan.frames[i]].time_s));
      }
    }
    return n;
  }
  size_t pairs = (last - first + 1) / 2;
  int64_t n = static_cast<int64_t>(pairs) * pieces_.MediaTokens(placeholders, true) + 16;
  for (size_t p = 0; p < pairs; ++p) {
    if (o_.transport == Transport::kFile) {
      n += pieces_.Text(t_.Timestamp(in_.frames[plan.frames[first + 2 * p]].time_s));
    } else if (o_.server_timestamps) {
      n += pieces_.Text(t_.Timestamp(static_cast<double>(2 * p) / o_.server_fps));
    }
  }
  return n;
}

int64_t Builder::Cost(const Plan& plan) const {
  int64_t n = fixed_cost_ + FramesCost(plan, 0, plan.frames.size());
  for (int64_t c : timed_cost_) n += c;
  for (size_t d = 0; d < plan.documents.size(); ++d) {
    ContextText t = in_.texts[document_index_[d]];
    t.text = plan.documents[d];
    n += pieces_.Text(DocumentText(t));
  }
  return n;
}

Result<Context> Builder::Build() {
  if (o_.token_budget <= 0 || o_.reserve_output_tokens < 0) {
    return InvalidArgument("token_budget must be positive and reserve_output_tokens not negative");
  }
  if (o_.transport == Transport::kVideo && o_.server_fps <= 0) {
    return InvalidArgument("the server's video fps must be positive");
  }
  Context ctx;
  ctx.template_name = t_.name;
  ctx.template_exact = t_.exact;
  ctx.count_method = c_.Method();
  ctx.count_exact = c_.exact();
  ctx.transport = o_.transport;
  ctx.limit = o_.token_budget - o_.reserve_output_tokens - t_.margin_tokens;
  if (ctx.limit <= 0) {
    return InvalidArgument(
        "nothing is left for the prompt: budget " + std::to_string(o_.token_budget) + " - output " +
        std::to_string(o_.reserve_output_tokens) + " - margin " + std::to_string(t_.margin_tokens));
  }
  for (size_t k = 0; k < in_.texts.size(); ++k) {
    (in_.texts[k].start_s ? timed_index_ : document_index_).push_back(k);
  }
  std::stable_sort(timed_index_.begin(), timed_index_.end(), [&](size_t a, size_t b) {
    return *in_.texts[a].start_s < *in_.texts[b].start_s;
  });
  for (size_t k : timed_index_) timed_cost_.push_back(pieces_.Text(Line(in_.texts[k])));
  fixed_cost_ = pieces_.Text(Head()) + pieces_.Text(o_.question + Tail()) + 8;

  Plan plan;
  for (size_t i = 0; i < in_.frames.size(); ++i) plan.frames.push_back(i);
  if (!in_.frames.empty()) {
    plan.width = in_.frames[0].width;
    plan.height = in_.frames[0].height;
  }
  for (size_t d : document_index_) plan.documents.push_back(in_.texts[d].text);
  if (files()) {
    if (o_.transport != Transport::kImages) {
      return InvalidArgument(in_.item_path + ": a context over " +
                             std::to_string(in_.sources.size()) +
                             " files sends their frames as images (transport \"images\"), not " +
                             TransportName(o_.transport));
    }
    plan.sizes.resize(in_.sources.size());
    std::vector<bool> seen(in_.sources.size(), false);
    for (const ContextFrame& f : in_.frames) {
      if (f.source >= in_.sources.size()) {
        return InvalidArgument(in_.item_path + ": a frame names file " + std::to_string(f.source) +
                               " of " + std::to_string(in_.sources.size()));
      }
      if (!seen[f.source]) plan.sizes[f.source] = {f.width, f.height};
      seen[f.source] = true;
    }
    for (size_t s = 0; s < seen.size(); ++s) {
      if (!seen[s]) return InvalidArgument(in_.sources[s].path + ": has no frames to send");
    }
  }

  // The steps fit tokens; the server's frame limit is met by splitting, never by dropping.
  auto fits = [&](const Plan& p) { return Cost(p) <= ctx.limit; };
  const bool can_split =
      std::find(o_.fit_steps.begin(), o_.fit_steps.end(), FitStep::kSplit) != o_.fit_steps.end();
  bool split = false;
  const bool frames_fixed = o_.transport == Transport::kFile && !in_.paged;
  // Paged documents split by pages (with or without pictures), other items by frames.
  std::vector<double> pages;
  if (in_.paged) {
    for (size_t k : timed_index_) pages.push_back(*in_.texts[k].start_s);
    for (const ContextFrame& f : in_.frames) pages.push_back(f.time_s);
    std::sort(pages.begin(), pages.end());
    pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  }
  const size_t split_units = in_.paged ? pages.size() : plan.frames.size();
  for (FitStep step : o_.fit_steps) {
    const bool tokens_ok = fits(plan);
    if (tokens_ok && FitsFrameLimit(plan.frames.size())) break;
    if (tokens_ok && step != FitStep::kSplit) continue;  // only the frame limit is left
    int64_t before = Cost(plan);
    FitAction action;
    action.step = FitStepName(step);
    action.tokens_before = before;
    std::optional<std::string> detail;
    switch (step) {
      case FitStep::kDedupe:
        detail = fit::Dedupe(in_, o_, plan);
        break;
      case FitStep::kLowerResolution:
        detail = fit::LowerResolution(in_, o_, fits, plan);
        break;
      case FitStep::kThinFrames:
        detail = fit::ThinFrames(in_, o_, fits, can_split, plan);
        break;
      case FitStep::kShortenText:
        detail = fit::ShortenText(fits, plan);
        break;
      case FitStep::kDropPagePictures:
        detail = fit::DropPagePictures(in_, fits, plan);
        break;
      case FitStep::kSplit:
        break;
    }
    if (detail) {
      action.detail = std::move(*detail);
    } else if (step == FitStep::kSplit && !frames_fixed && split_units > 1) {
      split = true;
      action.detail = "split into segments asked one by one, then once over their answers";
      action.tokens_after = 0;
      ctx.fit.push_back(action);
      break;
    } else {
      continue;
    }
    action.tokens_after = Cost(plan);
    ctx.fit.push_back(action);
  }
  if (!split && fits(plan) && !FitsFrameLimit(plan.frames.size()) && can_split) {
    split = true;
    FitAction action;
    action.step = "split";
    action.tokens_before = action.tokens_after = Cost(plan);
    ctx.fit.push_back(action);
  }
  if (!split && (!fits(plan) || !FitsFrameLimit(plan.frames.size()))) {
    if (!FitsFrameLimit(plan.frames.size())) {
      return LimitExceeded(in_.item_path + ": " + std::to_string(plan.frames.size()) +
                           " frames, but the server keeps " + std::to_string(o_.server_num_frames) +
                           " per video; allow the split fit step or raise the server's "
                           "num_frames");
    }
    return LimitExceeded(in_.item_path + ": needs " + std::to_string(Cost(plan)) +
                         " tokens, the limit is " + std::to_string(ctx.limit) + " (budget " +
                         std::to_string(o_.token_budget) + " - output " +
                         std::to_string(o_.reserve_output_tokens) + " - margin " +
                         std::to_string(t_.margin_tokens) + ") after: " + [&] {
                           std::string s;
                           for (const FitAction& a : ctx.fit) s += a.step + " ";
                           return s.empty() ? std::string("no fit step applied") : s;
                         }());
  }

  // Segments: [first frame, last frame) each, consecutive, each within the limit.
  std::vector<std::pair<size_t, size_t>> ranges;
  // Paged documents: each segment's pages [first, last) as page numbers (last: 1e300 = the end).
  std::vector<std::pair<double, double>> page_spans;
  if (split && in_.paged) {
    const int64_t base = fixed_cost_ + 64;
    auto frame_at = [&](double page) {  // the first kept frame at or after `page`
      size_t i = 0;
      while (i < plan.frames.size() && in_.frames[plan.frames[i]].time_s < page - 0.5) ++i;
      return i;
    };
    auto span_of = [&](size_t a, size_t b) {
      return std::make_pair(pages[a], b < pages.size() ? pages[b] : 1e300);
    };
    auto segment_cost = [&](size_t a, size_t b) {
      auto [from, to] = span_of(a, b);
      int64_t n = base + FramesCost(plan, frame_at(from), frame_at(to));
      for (size_t k = 0; k < timed_index_.size(); ++k) {
        double s = in_.texts[timed_index_[k]].start_s.value_or(0);
        if (s >= from - 0.5 && s < to - 0.5) n += timed_cost_[k];
      }
      return n;
    };
    using Ranges = std::vector<std::pair<size_t, size_t>>;
    REEL_ASSIGN_OR_RETURN(Ranges page_ranges,
                          fit::SplitPages(in_, pages.size(), ctx.limit, segment_cost));
    for (auto [a, b] : page_ranges) {
      auto span = span_of(a, b);
      page_spans.push_back(span);
      ranges.push_back({frame_at(span.first), frame_at(span.second)});
    }
    ctx.fit.back().detail = "split into " + std::to_string(ranges.size()) +
                            " consecutive page ranges, asked one by one, then once over their "
                            "answers";
    ctx.reduce_question = o_.reduce_question.empty()
                              ? "The document was too long for one request and was asked about "
                                "in " +
                                    std::to_string(ranges.size()) +
                                    " consecutive parts by pages. The answers for the parts "
                                    "follow. Using them, answer: " +
                                    o_.question
                              : o_.reduce_question;
  } else if (!split) {
    ranges.push_back({0, plan.frames.size()});
  } else {
    const int64_t base = fixed_cost_ + 64;  // the segment's header text and the reduce wording
    const std::vector<size_t> slots = files() ? LineSlots(plan) : std::vector<size_t>();
    auto segment_cost = [&](size_t a, size_t b) {
      if (files()) {
        int64_t n = base + FramesCost(plan, a, b);
        for (size_t k = 0; k < slots.size(); ++k) {
          if ((slots[k] >= a && slots[k] < b) || (b == plan.frames.size() && slots[k] == b)) {
            n += timed_cost_[k];
          }
        }
        return n;
      }
      double from = in_.frames[plan.frames[a]].time_s;
      double to = b < plan.frames.size() ? in_.frames[plan.frames[b]].time_s : 1e300;
      int64_t n = base + FramesCost(plan, a, b);
      for (size_t k = 0; k < timed_index_.size(); ++k) {
        double s = in_.texts[timed_index_[k]].start_s.value_or(0);
        if ((s >= from || a == 0) && s < to) n += timed_cost_[k];
      }
      return n;
    };
    REEL_ASSIGN_OR_RETURN(ranges, fit::SplitRanges(in_, plan, ctx.limit, segment_cost,
                                                   [&](size_t n) { return FitsFrameLimit(n); }));
    ctx.fit.back().detail =
        "split into " + std::to_string(ranges.size()) + " consecutive segments (" +
        (FitsFrameLimit(plan.frames.size())
             ? std::string("token limit")
             : "at most " + std::to_string(o_.server_num_frames) + " frames per video") +
        "), asked one by one, then once over their answers";
    ctx.reduce_question = o_.reduce_question.empty() && files()
                              ? "The files were too many for one request and were asked about in " +
                                    std::to_string(ranges.size()) +
                                    " consecutive parts. The answers for the parts follow, each "
                                    "with the files it covers. Using them, answer: " +
                                    o_.question
                          : o_.reduce_question.empty()
                              ? "The video was too long for one request and was asked about in " +
                                    std::to_string(ranges.size()) +
                                    " consecutive parts. The answers for the parts follow, each "
                                    "with its time range. Using them, answer: " +
                                    o_.question
                              : o_.reduce_question;
  }

  for (size_t r = 0; r < ranges.size(); ++r) {
    auto [a, b] = ranges[r];
    ContextSegment seg;
    seg.system_prompt = SystemPrompt();
    double from = b > a ? in_.frames[plan.frames[a]].time_s : 0;
    double to = b < plan.frames.size() ? in_.frames[plan.frames[b]].time_s : 1e300;
    if (r == 0) from = -1e300;
    seg.start_s = b > a ? in_.frames[plan.frames[a]].time_s : 0;
    seg.end_s = b > a ? in_.frames[plan.frames[b - 1]].time_s : in_.duration_s;
    if (in_.paged) {
      // Pages [from, to): texts start at their page number, the picture after its text.
      const double first_page =
          page_spans.empty() ? (pages.empty() ? 0 : pages.front()) : page_spans[r].first;
      const double end_page = page_spans.empty() ? 1e300 : page_spans[r].second;
      from = r == 0 ? -1e300 : first_page - 0.5;
      to = end_page >= 1e300 ? 1e300 : end_page - 0.5;
      seg.start_s = first_page;
      double last_page = first_page;
      for (double p : pages) {
        if (p < end_page - 0.5) last_page = std::max(last_page, p);
      }
      seg.end_s = last_page;
    }
    if (files()) {
      seg.parts = FileParts(plan, a, b, /*with_documents=*/!split);
      if (b > a) {
        seg.first_label = FrameName(plan, a);
        seg.last_label = FrameName(plan, b - 1);
      }
    } else {
      seg.parts = Parts(plan, a, b, from, to, /*with_documents=*/!split);
    }
    // Block alignment of the prefix (everything before the question): exact counts only.
    if (o_.prefix_block > 0 && c_.exact()) {
      int64_t unpadded = 0;
      if (auto aligned = Align(seg.parts, &unpadded)) {
        seg.padding = aligned->first;
        seg.prefix_tokens = aligned->second;
        seg.prefix_aligned = true;
      } else {
        seg.prefix_tokens = unpadded;
      }
    } else {
      std::vector<Piece> prefix = Render(seg.parts, "", "");
      prefix.back().text.resize(prefix.back().text.size() - Tail().size());
      seg.prefix_tokens = pieces_.Count(prefix).total;
    }
    ContextPart question;
    question.text = seg.padding + o_.question;
    seg.parts.push_back(std::move(question));
    seg.tokens = pieces_.Count(Render(seg.parts, "", ""));
    if (seg.tokens.total > ctx.limit && !seg.padding.empty()) {
      // The padding is a nicety: a request that fits only without it goes unaligned.
      seg.parts.back().text = o_.question;
      seg.padding.clear();
      seg.prefix_aligned = false;
      seg.tokens = pieces_.Count(Render(seg.parts, "", ""));
      std::vector<Piece> prefix =
          Render(std::vector<ContextPart>(seg.parts.begin(), seg.parts.end() - 1), "", "");
      prefix.back().text.resize(prefix.back().text.size() - Tail().size());
      seg.prefix_tokens = pieces_.Count(prefix).total;
    }
    seg.tokens.margin = t_.margin_tokens;
    if (seg.tokens.total > ctx.limit) {
      return LimitExceeded(in_.item_path + ": the request needs " +
                           std::to_string(seg.tokens.total) + " tokens, the limit is " +
                           std::to_string(ctx.limit));
    }
    ctx.segments.push_back(std::move(seg));
  }
  ctx.kept_frames = plan.frames;
  ctx.paged = in_.paged;
  if (in_.paged) {
    ctx.frame_sizes.assign(in_.frames.size(), {0, 0});
    for (size_t f : plan.frames) ctx.frame_sizes[f] = SizeOf(plan, f);
  }
  ctx.frame_width = plan.width;
  ctx.frame_height = plan.height;
  ctx.frame_max_pixels = plan.max_pixels;
  ctx.source_sizes = plan.sizes;
  return ctx;
}

}  // namespace

std::string Context::ManifestJson(const ContextInput& input, size_t segment) const {
  using nlohmann::json;
  const ContextSegment& seg = segments.at(segment);
  json parts = json::array();
  for (const ContextPart& p : seg.parts) {
    json j;
    switch (p.kind) {
      case ContextPart::Kind::kText:
        j["type"] = "text";
        j["chars"] = p.text.size();
        break;
      case ContextPart::Kind::kImage:
        j["type"] = "image";
        break;
      case ContextPart::Kind::kVideo:
        j["type"] = "video";
        break;
      case ContextPart::Kind::kVideoFile:
        j["type"] = "video_file";
        break;
    }
    if (p.kind != ContextPart::Kind::kText) {
      json frames = json::array();
      for (size_t f : p.frames) {
        json frame = {{"sample_index", input.frames[f].sample_index},
                      {"time_s", input.frames[f].time_s}};
        if (!input.sources.empty()) frame["source"] = input.frames[f].source;
        frames.push_back(frame);
      }
      j["frames"] = frames;
      j["size"] = std::to_string(p.width) + "x" + std::to_string(p.height);
    }
    parts.push_back(j);
  }
  json texts = json::array();
  for (const ContextText& t : input.texts) {
    json j = {{"source", t.source}, {"bytes", t.text.size()}};
    if (t.start_s) j["start_s"] = *t.start_s;
    if (t.end_s) j["end_s"] = *t.end_s;
    texts.push_back(j);
  }
  json fit_steps = json::array();
  for (const FitAction& a : fit) {
    fit_steps.push_back({{"step", a.step},
                         {"detail", a.detail},
                         {"tokens_before", a.tokens_before},
                         {"tokens_after", a.tokens_after}});
  }
  json m = {
      {"item", input.item_path},
      {"template", {{"name", template_name}, {"exact", template_exact}}},
      {"count", {{"method", count_method}, {"exact", count_exact}}},
      {"transport", TransportName(transport)},
      {"limit", limit},
      {"segment", {{"index", segment}, {"count", segments.size()}}},
      {"time_range_s", {seg.start_s, seg.end_s}},
      {"tokens",
       {{"text", seg.tokens.text},
        {"image", seg.tokens.image},
        {"video", seg.tokens.video},
        {"total", seg.tokens.total},
        {"margin", seg.tokens.margin}}},
      {"prefix",
       {{"tokens", seg.prefix_tokens}, {"padding", seg.padding}, {"aligned", seg.prefix_aligned}}},
      {"fit", fit_steps},
      {"frames",
       {{"input", input.frames.size()},
        {"kept", kept_frames.size()},
        {"size", std::to_string(frame_width) + "x" + std::to_string(frame_height)}}},
      {"texts", texts},
      {"system_prompt", seg.system_prompt},
      {"parts", parts},
  };
  if (segments.size() > 1) m["reduce_question"] = reduce_question;
  if (paged) m["page_range"] = {seg.start_s, seg.end_s};
  if (!input.sources.empty()) {
    json sources = json::array();
    for (size_t s = 0; s < input.sources.size(); ++s) {
      const ContextSource& src = input.sources[s];
      json j = {{"path", src.path},
                {"kind", src.kind == ContextItemKind::kVideo ? "video" : "image"}};
      if (!src.frame_source.empty()) j["frame_source"] = src.frame_source;
      if (s < source_sizes.size()) {
        j["size"] =
            std::to_string(source_sizes[s].width) + "x" + std::to_string(source_sizes[s].height);
      }
      sources.push_back(j);
    }
    m["sources"] = sources;
    m["label"] = {seg.first_label, seg.last_label};
  }
  return m.dump();
}

Result<Context> BuildContext(const ContextInput& input, const ContextOptions& options,
                             const ChatTemplate& chat_template, const TokenCounter& counter) {
  Builder b(input, options, chat_template, counter);
  return b.Build();
}

}  // namespace reel::llm
