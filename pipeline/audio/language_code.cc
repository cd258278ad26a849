#include "pipeline/audio/language_code.h"

#include <array>
#include <cctype>

namespace reel::pipeline {
namespace {

struct Language {
  const char* code;  // ISO 639-1, or Whisper's code where there is none
  const char* b;     // ISO 639-2/B
  const char* t;     // ISO 639-2/T ("" when the same as /B)
  const char* name;  // English, lower case
};

// Whisper's languages (its tokenizer's table, in its order), with their 639-2 codes.
constexpr std::array<Language, 100> kLanguages = {{
    {"en", "eng", "", "english"},        {"zh", "chi", "zho", "chinese"},
    {"de", "ger", "deu", "german"},      {"es", "spa", "", "spanish"},
    {"ru", "rus", "", "russian"},        {"ko", "kor", "", "korean"},
    {"fr", "fre", "fra", "french"},      {"ja", "jpn", "", "japanese"},
    {"pt", "por", "", "portuguese"},     {"tr", "tur", "", "turkish"},
    {"pl", "pol", "", "polish"},         {"ca", "cat", "", "catalan"},
    {"nl", "dut", "nld", "dutch"},       {"ar", "ara", "", "arabic"},
    {"sv", "swe", "", "swedish"},        {"it", "ita", "", "italian"},
    {"id", "ind", "", "indonesian"},     {"hi", "hin", "", "hindi"},
    {"fi", "fin", "", "finnish"},        {"vi", "vie", "", "vietnamese"},
    {"he", "heb", "", "hebrew"},         {"uk", "ukr", "", "ukrainian"},
    {"el", "gre", "ell", "greek"},       {"ms", "may", "msa", "malay"},
    {"cs", "cze", "ces", "czech"},       {"ro", "rum", "ron", "romanian"},
    {"da", "dan", "", "danish"},         {"hu", "hun", "", "hungarian"},
    {"ta", "tam", "", "tamil"},          {"no", "nor", "nob", "norwegian"},
    {"th", "tha", "", "thai"},           {"ur", "urd", "", "urdu"},
    {"hr", "hrv", "", "croatian"},       {"bg", "bul", "", "bulgarian"},
    {"lt", "lit", "", "lithuanian"},     {"la", "lat", "", "latin"},
    {"mi", "mao", "mri", "maori"},       {"ml", "mal", "", "malayalam"},
    {"cy", "wel", "cym", "welsh"},       {"sk", "slo", "slk", "slovak"},
    {"te", "tel", "", "telugu"},         {"fa", "per", "fas", "persian"},
    {"lv", "lav", "", "latvian"},        {"bn", "ben", "", "bengali"},
    {"sr", "srp", "", "serbian"},        {"az", "aze", "", "azerbaijani"},
    {"sl", "slv", "", "slovenian"},      {"kn", "kan", "", "kannada"},
    {"et", "est", "", "estonian"},       {"mk", "mac", "mkd", "macedonian"},
    {"br", "bre", "", "breton"},         {"eu", "baq", "eus", "basque"},
    {"is", "ice", "isl", "icelandic"},   {"hy", "arm", "hye", "armenian"},
    {"ne", "nep", "", "nepali"},         {"mn", "mon", "", "mongolian"},
    {"bs", "bos", "", "bosnian"},        {"kk", "kaz", "", "kazakh"},
    {"sq", "alb", "sqi", "albanian"},    {"sw", "swa", "", "swahili"},
    {"gl", "glg", "", "galician"},       {"mr", "mar", "", "marathi"},
    {"pa", "pan", "", "punjabi"},        {"si", "sin", "", "sinhala"},
    {"km", "khm", "", "khmer"},          {"sn", "sna", "", "shona"},
    {"yo", "yor", "", "yoruba"},         {"so", "som", "", "somali"},
    {"af", "afr", "", "afrikaans"},      {"oc", "oci", "", "occitan"},
    {"ka", "geo", "kat", "georgian"},    {"be", "bel", "", "belarusian"},
    {"tg", "tgk", "", "tajik"},          {"sd", "snd", "", "sindhi"},
    {"gu", "guj", "", "gujarati"},       {"am", "amh", "", "amharic"},
    {"yi", "yid", "", "yiddish"},        {"lo", "lao", "", "lao"},
    {"uz", "uzb", "", "uzbek"},          {"fo", "fao", "", "faroese"},
    {"ht", "hat", "", "haitian creole"}, {"ps", "pus", "", "pashto"},
    {"tk", "tuk", "", "turkmen"},        {"nn", "nno", "", "nynorsk"},
    {"mt", "mlt", "", "maltese"},        {"sa", "san", "", "sanskrit"},
    {"lb", "ltz", "", "luxembourgish"},  {"my", "bur", "mya", "myanmar"},
    {"bo", "tib", "bod", "tibetan"},     {"tl", "tgl", "", "tagalog"},
    {"mg", "mlg", "", "malagasy"},       {"as", "asm", "", "assamese"},
    {"tt", "tat", "", "tatar"},          {"haw", "haw", "", "hawaiian"},
    {"ln", "lin", "", "lingala"},        {"ha", "hau", "", "hausa"},
    {"ba", "bak", "", "bashkir"},        {"jw", "jav", "", "javanese"},
    {"su", "sun", "", "sundanese"},      {"yue", "yue", "", "cantonese"},
}};

// Other spellings people and files use.
struct Alias {
  const char* text;
  const char* code;
};
constexpr std::array<Alias, 10> kAliases = {{
    {"jv", "jw"},
    {"nb", "no"},
    {"iw", "he"},
    {"in", "id"},
    {"castilian", "es"},
    {"flemish", "nl"},
    {"burmese", "my"},
    {"moldavian", "ro"},
    {"panjabi", "pa"},
    {"farsi", "fa"},
}};

std::string Key(std::string_view text) {
  std::string key;
  for (char c : text) {
    if (c == '-' || c == '_') break;  // "en-US", "pt_BR": the language part
    key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  while (!key.empty() && key.back() == ' ') key.pop_back();
  size_t first = key.find_first_not_of(' ');
  return first == std::string::npos ? std::string() : key.substr(first);
}

const Language* Find(std::string_view text) {
  std::string key = Key(text);
  if (key.empty()) return nullptr;
  for (const Alias& a : kAliases) {
    if (key == a.text) {
      key = a.code;
      break;
    }
  }
  for (const Language& l : kLanguages) {
    if (key == l.code || key == l.b || (*l.t != '\0' && key == l.t) || key == l.name) return &l;
  }
  return nullptr;
}

}  // namespace

std::string LanguageCode(std::string_view text) {
  const Language* l = Find(text);
  return l != nullptr ? l->code : "";
}

std::string LanguageName(std::string_view text) {
  const Language* l = Find(text);
  return l != nullptr ? l->name : "";
}

bool SameLanguage(std::string_view a, std::string_view b) {
  const Language* x = Find(a);
  return x != nullptr && x == Find(b);
}

}  // namespace reel::pipeline
