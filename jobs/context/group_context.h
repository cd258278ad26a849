// One question over several files (`reel ask a.mp4 b.png notes.md "question"`): the first file's
// item holds the question, tasks and answer, and its context the frames of every file of the
// group (llm::ContextInput::sources). A member that could not be read fails the question, naming
// the file. Details: jobs/context/README.md, "Group contexts".
#pragma once

#include <string>

#include "base/status.h"
#include "jobs/spec/job_spec.h"
#include "llm/context/context_builder.h"
#include "storage/records.h"
#include "storage/store.h"

namespace reel::jobs {

// Whether the input at `path` (as the job's inputs name it) is a member of the job's group: read,
// never asked about alone.
bool IsGroupMember(const JobSpec& job, const std::string& path);

// Adds the job's group members (context.group, stored items of `item`'s job) to `input`, the
// stored input of `item`, the group's item: every file becomes a ContextInput source, videos
// first; timed texts keep their file. Nothing to do without a group. Errors (naming the file): a
// member is not in the database, not read yet, or failed (its error), or has no frames.
Status AddGroupMedia(storage::Store& store, const JobSpec& job, const storage::ItemRecord& item,
                     llm::ContextInput* input);

// `key` (ContextSettingsKey of the group's item) with the identity of every file of the group:
// a member changed or re-sampled is a new context. `key` itself without a group.
std::string GroupSettingsKey(const std::string& key, const llm::ContextInput& input);

}  // namespace reel::jobs
