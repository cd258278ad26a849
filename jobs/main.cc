// The `reel` command line: parses the subcommand and hands over to jobs/cli/.
#include <cstdio>
#include <exception>

#include "base/utf8.h"
#include "jobs/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "reel: sample videos and documents into contexts for a multimodal model, and keep "
      "everything in SQLite"};
  app.set_version_flag("--version", "reel 0.1.0");
  app.require_subcommand(1);
  int exit_code = reel::cli::kExitOk;
  reel::cli::AddProbeCommand(app, exit_code);
  reel::cli::AddFramesCommand(app, exit_code);
  reel::cli::AddInitCommand(app, exit_code);
  reel::cli::AddValidateCommand(app, exit_code);
  reel::cli::AddPlanCommand(app, exit_code);
  reel::cli::AddRunCommand(app, exit_code);
  reel::cli::AddQueryCommand(app, exit_code);
  reel::cli::AddStatusCommand(app, exit_code);
  reel::cli::AddResultsCommand(app, exit_code);
  reel::cli::AddShowCommand(app, exit_code);
  reel::cli::AddPruneCommand(app, exit_code);
  reel::cli::AddSearchCommand(app, exit_code);
  reel::cli::AddMergeCommand(app, exit_code);
  reel::cli::AddTokenizeCommand(app, exit_code);
  reel::cli::AddExportCommand(app, exit_code);
  reel::cli::AddImportCommand(app, exit_code);
  reel::cli::AddAskCommand(app, exit_code);
  reel::cli::AddContextCommand(app, exit_code);
  reel::cli::AddEncodeCommand(app, exit_code);
  reel::cli::AddMakeTestWeightsCommand(app, exit_code);
  reel::cli::AddSimilarCommand(app, exit_code);
  reel::cli::AddReportCommand(app, exit_code);
  reel::cli::AddTextCommand(app, exit_code);
  reel::cli::AddPagesCommand(app, exit_code);
  reel::cli::AddTranscribeCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "reel: %s\n", e.what());
    std::fprintf(stderr, "Run 'reel --help' or 'reel COMMAND --help' for usage.\n");
    return reel::cli::kExitUsage;
  } catch (const std::exception& e) {
    // A bug (or out of memory): say so and fail instead of aborting without a word. The fuzz
    // targets (tests/fuzz) call the commands without this guard, so such bugs still surface.
    std::fprintf(stderr, "reel: internal error: %s\n", reel::SafeUtf8(e.what()).c_str());
    return reel::cli::kExitFailed;
  }
  return exit_code;
}
