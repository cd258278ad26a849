// Parser's `speech:` section (job_parser.h) into JobSpec::speech.
#include <yaml-cpp/yaml.h>

#include "jobs/spec/job_parser.h"
#include "llm/client/endpoint_url.h"
#include "pipeline/audio/language_code.h"

namespace reel::jobs::parser {
namespace {

const std::vector<std::string> kSpeechKeys = {
    "enabled",      "backend", "endpoint",  "model",       "language",
    "api_key_env",  "prefer",  "max_chunk", "concurrency", "connect_timeout",
    "read_timeout", "retries", "time_limit"};

}  // namespace

void Parser::ReadSpeech(const Fields& top) {
  const Field* section = top.Find("speech");
  if (section == nullptr) return;
  const std::string path = "speech";
  std::optional<Fields> fields = ReadMap(section->value, MarkOf(*section), path, kSpeechKeys);
  if (!fields) return;
  SpeechSpec& s = job_.speech;
  ReadBool(*fields, "enabled", path, &s.enabled);
  if (ReadString(*fields, "backend", path, &s.backend) && s.backend != "auto" &&
      s.backend != "pocketsphinx" && s.backend != "openai") {
    Error(MarkOf(*fields->Find("backend")),
          "'speech.backend' must be one of 'auto', 'pocketsphinx', 'openai'; got " +
              Quoted(s.backend));
    s.backend = "auto";
  }
  std::string endpoint;
  if (ReadString(*fields, "endpoint", path, &endpoint) && !endpoint.empty()) {
    if (!endpoint.starts_with("http://") && !endpoint.starts_with("https://")) {
      Error(MarkOf(*fields->Find("endpoint")),
            "'speech.endpoint' must be an http:// or https:// URL (e.g. "
            "http://localhost:8001/v1), got " +
                Quoted(endpoint));
    } else if (Status url = llm::CheckEndpointUrl(endpoint); !url.ok()) {
      Error(MarkOf(*fields->Find("endpoint")), "'speech.endpoint': " + url.message());
    } else {
      while (endpoint.size() > 8 && endpoint.back() == '/') endpoint.pop_back();
      s.endpoint = endpoint;
    }
  }
  ReadString(*fields, "model", path, &s.model);
  if (ReadString(*fields, "language", path, &s.language) && !s.language.empty() &&
      pipeline::LanguageCode(s.language).empty()) {
    Error(MarkOf(*fields->Find("language")),
          "'speech.language' names no language Reel knows (use a code such as 'en', 'deu' or "
          "a name such as 'English'), got " +
              Quoted(s.language));
  }
  if (ReadString(*fields, "api_key_env", path, &s.api_key_env) && !s.api_key_env.empty() &&
      !ValidEnvName(s.api_key_env)) {
    // The value may be a secret pasted by mistake: never repeat it.
    Error(MarkOf(*fields->Find("api_key_env")),
          "'speech.api_key_env' must be the NAME of an environment variable (letters, digits, "
          "'_'; e.g. WHISPER_API_KEY) that holds the key, not the key itself");
    s.api_key_env.clear();
  }
  ReadEnum(*fields, "prefer", path, SpeechPreferNames(), &s.prefer);
  ReadSeconds(*fields, "max_chunk", path, &s.max_chunk_s, 1, false, 3600);
  ReadInt(*fields, "concurrency", path, &s.concurrency, 1, 256);
  ReadSeconds(*fields, "connect_timeout", path, &s.connect_timeout_s, 0, true, 86400);
  ReadSeconds(*fields, "read_timeout", path, &s.read_timeout_s, 0, true, 7 * 86400);
  ReadInt(*fields, "retries", path, &s.retries, 0, 100);
  ReadSeconds(*fields, "time_limit", path, &s.time_limit_s, 0, true, 30 * 86400);

  const std::string backend = SpeechBackendOf(s);
  if (backend == "openai" && !s.endpoint && s.enabled) {
    const Field* f = fields->Find("backend");
    Error(f ? MarkOf(*f) : MarkOf(*section),
          "'speech.backend' is openai but 'speech.endpoint' is not set (the transcription "
          "server's URL, e.g. http://localhost:8001/v1)");
  }
  if (backend == "pocketsphinx" && !s.language.empty() &&
      pipeline::LanguageCode(s.language) != "en" && !pipeline::LanguageCode(s.language).empty()) {
    Error(MarkOf(*fields->Find("language")),
          "'speech.language' is " + Quoted(s.language) +
              " but PocketSphinx (the offline backend) transcribes English only: set "
              "'speech.endpoint' to a Whisper server for other languages");
  }
  if (s.enabled && s.endpoint && !s.api_key_env.empty() && !options_.lookup_env(s.api_key_env)) {
    Warn(MarkOf(*fields->Find("api_key_env")),
         "environment variable '" + s.api_key_env + "' ('speech.api_key_env') is not set now");
  }
}

}  // namespace reel::jobs::parser
