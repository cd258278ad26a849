// A multipart/form-data body (RFC 7578), as POST /v1/audio/transcriptions takes it: text fields
// and one file. Held in memory (a speech chunk's WAV is about 1 MB).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace reel::llm {

class MultipartForm {
 public:
  struct Part {
    std::string name;
    std::string filename;  // "" for a text field
    std::string content_type;
    std::string data;
  };

  void AddField(std::string name, std::string value);
  void AddFile(std::string name, std::string filename, std::string content_type, std::string data);

  // The body, with a boundary that occurs in no part, and the matching Content-Type value
  // ("multipart/form-data; boundary=..."). `seed` varies the boundary (tests pass a fixed one).
  struct Encoded {
    std::string body;
    std::string content_type;
  };
  Encoded Encode(unsigned long long seed) const;

 private:
  std::vector<Part> parts_;
};

}  // namespace reel::llm
