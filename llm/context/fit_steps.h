// The fit steps of BuildContext (context_builder.h), one file each (fit_<step>.cc), as
// Builder::Build calls them in the job's order until the item fits its token limit.
//
// Each step takes the plan the steps before it left and returns the detail line of its
// FitAction after changing the plan toward the limit, or nullopt when it does not apply (the
// plan is left as it was and the next step is tried). `fits` is the budget check of a plan
// (its near-exact cost within the limit). Pure functions, no I/O; private to llm/context/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "llm/context/context_builder.h"

namespace reel::llm::fit {

// The state the fit steps change.
struct Plan {
  std::vector<size_t> frames;          // kept input frames
  int width = 0, height = 0;           // frame size
  int64_t max_pixels = 0;              // lower_resolution: the smart-resize max_pixels of that size
  std::vector<std::string> documents;  // document texts (maybe shortened), by document order
  std::vector<FrameSize> sizes;        // several files (ContextInput::sources): each one's size
};

using Fits = std::function<bool(const Plan&)>;

// dedupe: drops frames the vision encoder marked as near duplicates and frames within
// dedupe_max_distance dHash bits of the frame kept before them (the first and last stay).
std::optional<std::string> Dedupe(const ContextInput& in, const ContextOptions& o, Plan& plan);

// lower_resolution: the largest frame size (smart resize of the source, max_pixels not below
// min_pixels_floor) whose request fits.
std::optional<std::string> LowerResolution(const ContextInput& in, const ContextOptions& o,
                                           const Fits& fits, Plan& plan);

// thin_frames: the most frames that fit, evenly spread, first and last kept, not below min_fps;
// left to split (nullopt) when even that does not fit and `can_split`.
std::optional<std::string> ThinFrames(const ContextInput& in, const ContextOptions& o,
                                      const Fits& fits, bool can_split, Plan& plan);

// shorten_text: the longest document shortened from its end (at a UTF-8 boundary, marked
// " [...]"), as little as needed, and again until the plan fits or nothing is left.
std::optional<std::string> ShortenText(const Fits& fits, Plan& plan);

// split: the plan's frames as consecutive ranges [first, last) of plan.frames, each as long as
// `segment_cost` (the tokens of one segment's request) stays within `limit` and
// `fits_frame_limit` (the server's frames per video) allows. kLimitExceeded, naming the item,
// when one frame with its text is already too much.
Result<std::vector<std::pair<size_t, size_t>>> SplitRanges(
    const ContextInput& in, const Plan& plan, int64_t limit,
    const std::function<int64_t(size_t, size_t)>& segment_cost,
    const std::function<bool(size_t)>& fits_frame_limit);

// drop_page_pictures (paged documents): leaves out pictures of pages that have a good text
// layer (ContextFrame::page_has_text), keeping the most of them that fit, evenly spread over
// the document; pictures of scanned and textless pages stay. nullopt when the input is not
// paged or has no such picture.
std::optional<std::string> DropPagePictures(const ContextInput& in, const Fits& fits, Plan& plan);

// split (paged documents): `pages` pages cut into consecutive ranges [first, last), each as
// long as `segment_cost` stays within `limit`. kLimitExceeded, naming the item, when one page
// alone is too much.
Result<std::vector<std::pair<size_t, size_t>>> SplitPages(
    const ContextInput& in, size_t pages, int64_t limit,
    const std::function<int64_t(size_t, size_t)>& segment_cost);

}  // namespace reel::llm::fit
