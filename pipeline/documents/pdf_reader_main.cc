// reel-pdf-reader: the program Reel reads each PDF in, behind a process boundary with a memory
// limit (pipeline/documents/internal/pdf_isolation.cc starts it and speaks its protocol on its
// standard input and output; it is not for people).
#include <unistd.h>

#include "pipeline/documents/internal/format_reader.h"

int main() {
  // _exit: the answer is already written (unbuffered); the libraries' exit-time work (and, in
  // the sanitizer builds, a leak report of their caches on the run's standard error) is skipped.
  _exit(reel::pipeline::documents::RunPdfReaderProgram(STDIN_FILENO, STDOUT_FILENO));
}
