// Time references in a model's answer: the grammar and the frame linking live in
// base/time_references.h (pure text, so storage indexes answers without depending on llm). This
// header keeps their llm:: names for the model layer and its callers.
#pragma once

#include "base/time_references.h"

namespace reel::llm {

using reel::CodePointOffset;
using reel::FindTimeReferences;
using reel::FormatClockTime;
using reel::IsInsideItem;
using reel::kTimeReferenceGrammarVersion;
using reel::kTimeSlackSeconds;
using reel::NearestFrame;
using reel::ParseTimeText;
using reel::TimeForm;
using reel::TimeFormName;
using reel::TimeReference;

}  // namespace reel::llm
