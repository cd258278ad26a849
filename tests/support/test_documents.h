// Documents for the document tests: made once per build tree by
// tests/pipeline/documents/make_documents.py (Debian's python3 with python3-cairo, ps2pdf,
// pdftoppm, img2pdf, qpdf), and the reference tools' answers (poppler-utils).
#pragma once

#include <string>
#include <vector>

namespace reel::testing {

// The folder holding the generated documents (and NAME.expected.txt beside each), made on first
// use under the build tree, keyed by the script's contents; safe from parallel test processes.
// "" when a tool is missing (the caller skips; the reason is in *why).
std::string TestDocuments(std::string* why = nullptr);

// The Python that has Debian's modules (python3-cairo): /usr/bin/python3 when present.
std::string DebianPython();

// Text split at form feeds (a trailing empty piece after the last one dropped).
std::vector<std::string> SplitPages(const std::string& text);

// Runs of white space made one space, ends trimmed.
std::string NormalizeSpace(const std::string& text);

// The character error rate of `got` against `want`: edit distance over code points / length of
// `want`, both with white space normalised first.
double CharacterErrorRate(const std::string& got, const std::string& want);

}  // namespace reel::testing
