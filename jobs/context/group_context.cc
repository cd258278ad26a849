#include "jobs/context/group_context.h"

#include <algorithm>
#include <vector>

#include "base/utf8.h"
#include "jobs/context/context_frames.h"
#include "jobs/context/item_context.h"
#include "storage/sha256.h"

namespace reel::jobs {

bool IsGroupMember(const JobSpec& job, const std::string& path) {
  // Named as the job's inputs name them: relative ones start at the job file's folder.
  return std::any_of(job.context.group.begin(), job.context.group.end(),
                     [&](const std::string& g) { return ResolveJobPath(job.base_dir, g) == path; });
}

Status AddGroupMedia(storage::Store& store, const JobSpec& job, const storage::ItemRecord& item,
                     llm::ContextInput* input) {
  if (job.context.group.empty()) return Status::Ok();
  struct File {
    storage::ItemRecord record;
    llm::ContextInput in;
  };
  std::vector<File> files;
  files.push_back({item, *input});
  for (const std::string& path : job.context.group) {
    const std::string shown = DisplayPath(ResolveJobPath(job.base_dir, path));
    REEL_ASSIGN_OR_RETURN(std::optional<storage::ItemRecord> member,
                          store.FindItem(item.job_id, shown));
    if (!member) return NotFound(shown + ": not read (it is not in the database)");
    if (member->status == storage::ItemStatus::kFailed) {
      const std::string error = member->error.value_or("it failed");
      return CorruptData(error.find(shown) == std::string::npos ? shown + ": " + error : error);
    }
    if (member->status != storage::ItemStatus::kDone) {
      return Unavailable(shown + ": not read yet");
    }
    REEL_ASSIGN_OR_RETURN(llm::ContextInput in, LoadContextInput(store, member->id, &job));
    if (in.kind != llm::ContextItemKind::kVideo && in.kind != llm::ContextItemKind::kImage) {
      return InvalidArgument(shown + ": only videos and images are read into one context");
    }
    files.push_back({std::move(*member), std::move(in)});
  }
  // Videos first, then images, each in the order given.
  std::stable_partition(files.begin(), files.end(),
                        [](const File& f) { return f.in.kind == llm::ContextItemKind::kVideo; });
  llm::ContextInput out;
  out.item_path = input->item_path;
  out.kind = files.front().in.kind;
  out.source_width = input->source_width;
  out.source_height = input->source_height;
  out.duration_s = input->duration_s;
  for (const llm::ContextText& t : input->texts) {
    if (!t.start_s) out.texts.push_back(t);  // documents and attached texts
  }
  for (size_t s = 0; s < files.size(); ++s) {
    const llm::ContextInput& in = files[s].in;
    if (in.frames.empty()) return InvalidArgument(files[s].record.path + ": has no frames");
    llm::ContextSource source;
    source.path = files[s].record.path;
    source.kind = in.kind;
    source.source_width = in.source_width;
    source.source_height = in.source_height;
    source.duration_s = in.duration_s;
    source.frame_source = FrameSource(files[s].record);
    out.sources.push_back(std::move(source));
    for (llm::ContextFrame f : in.frames) {
      f.source = s;
      out.frames.push_back(f);
    }
    for (llm::ContextText t : in.texts) {
      if (!t.start_s) continue;  // a member's untimed text: none (videos and images)
      t.file = s;
      out.texts.push_back(std::move(t));
    }
  }
  *input = std::move(out);
  return Status::Ok();
}

std::string GroupSettingsKey(const std::string& key, const llm::ContextInput& input) {
  if (input.sources.empty()) return key;
  std::string identity = "group 1\n" + key;
  for (const llm::ContextSource& s : input.sources) {
    identity += "\n" + s.path + "\n" + s.frame_source;
  }
  return storage::Sha256Hex(identity);
}

}  // namespace reel::jobs
