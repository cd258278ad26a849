// The report's stylesheet (written as report.css beside the pages). No web fonts, no images.
#pragma once

namespace reel::jobs::report {

inline constexpr const char* kReportCss = R"css(
:root { --fg: #1a202c; --muted: #5a6472; --line: #e2e8f0; --accent: #2b6cb0; --bad: #c53030;
        --ok: #2f855a; --warn: #b7791f; --hl: #fefcbf; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 0 16px 32px; color: var(--fg);
       font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
h1 { font-size: 22px; margin: 8px 0 4px; word-break: break-all; }
h2 { font-size: 18px; margin: 24px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
nav.top { padding: 10px 0; color: var(--muted); border-bottom: 1px solid var(--line); }
.summary { color: var(--muted); margin: 0 0 8px; }
.jump a { margin-right: 12px; }
.empty, .note { color: var(--muted); font-style: italic; }
.error { color: var(--bad); }
.warn { color: var(--warn); }
.status { font-weight: 600; }
.status.done, .status.succeeded { color: var(--ok); }
.status.failed, .status.interrupted { color: var(--bad); }
.status.running, .status.pending { color: var(--warn); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 4px 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
table.data { border-collapse: collapse; margin: 6px 0 12px; }
table.data th, table.data td { border-bottom: 1px solid var(--line); padding: 3px 8px;
                               text-align: left; vertical-align: top; }
table.data td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.data tr.total td { font-weight: 600; }
table.data caption { text-align: left; font-weight: 600; padding: 4px 0; }
table.index td.thumb { width: 100px; }
table.index td.path { word-break: break-all; }
table.index .job, table.index .folder { color: var(--muted); font-size: 12px; }
table.index td.path a { font-weight: 600; }
td.problems span { display: block; }
td.segment { white-space: pre-wrap; }
.answer { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; margin: 8px 0; }
.answer h3 { margin: 0 0 6px; color: var(--muted); font-size: 13px; text-transform: uppercase;
             letter-spacing: 0.04em; }
.answer .meta { color: var(--muted); font-size: 12px; margin: 8px 0 0; }
.content.raw { white-space: pre-wrap; overflow-wrap: anywhere; }
.content.markdown { overflow-wrap: anywhere; font-size: 15px; line-height: 1.55; }
.content.markdown > :first-child { margin-top: 0; }
.content.markdown > :last-child { margin-bottom: 0; }
.content.markdown p, .content.markdown ul, .content.markdown ol { margin: 6px 0; }
.content.markdown table { border-collapse: collapse; margin: 8px 0; }
.content.markdown th, .content.markdown td { border: 1px solid var(--line); padding: 3px 8px;
                                             text-align: left; vertical-align: top; }
.content.markdown th { background: #f7fafc; }
.content.markdown code { background: #edf2f7; border-radius: 3px; padding: 0 3px; font-size: 13px; }
.content.markdown pre { background: #f7fafc; border: 1px solid var(--line); padding: 8px;
                        overflow-x: auto; }
.content.markdown pre code { background: none; padding: 0; }
.content.markdown blockquote { margin: 6px 0; padding-left: 10px; border-left: 3px solid var(--line);
                               color: var(--muted); }
.reasoning { color: var(--muted); }
a.t { background: #ebf4ff; border-radius: 3px; padding: 0 2px; font-variant-numeric: tabular-nums; }
span.t.outside { background: #fed7d7; border-radius: 3px; padding: 0 2px; }
a.t.other-file { background: #e9f5ec; }
.answer .asked-over { color: var(--muted); font-size: 13px; margin: 0 0 6px; }
.asked-over .file.missing { text-decoration: underline dotted; }
ol.chapters { margin: 4px 0 8px; padding-left: 22px; }
ol.chapters li { margin: 2px 0; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
.chapter-summary { color: var(--muted); }
.timeline { position: relative; height: 30px; margin: 8px 0 12px; background: #f7fafc;
            border: 1px solid var(--line); border-radius: 4px; overflow: hidden; }
.timeline a.chapter { position: absolute; top: 0; bottom: 0; padding: 6px 4px; color: #fff;
                      font-size: 12px; white-space: nowrap; overflow: hidden;
                      text-overflow: ellipsis; border-right: 1px solid #fff; }
.c0 { background: #2b6cb0; } .c1 { background: #2f855a; } .c2 { background: #b7791f; }
.c3 { background: #6b46c1; } .c4 { background: #c53030; } .c5 { background: #2c7a7b; }
.sheet { display: grid; grid-template-columns: repeat(auto-fill, minmax(240px, 1fr)); gap: 10px; }
.sheet.with-text { grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); }
.sheet.with-text figure.frame { display: grid; grid-template-columns: 256px 1fr; gap: 10px; }
.sheet h3.chapter-start { grid-column: 1 / -1; color: #fff; margin: 6px 0 0; padding: 4px 8px;
                          border-radius: 4px; font-size: 13px; }
figure.frame { margin: 0; padding: 4px; border: 1px solid var(--line); border-radius: 4px;
               scroll-margin-top: 40vh; }
figure.frame:target { background: var(--hl); border-color: var(--warn);
                      box-shadow: 0 0 0 3px var(--warn); }
figure.frame img, .nothumb { display: block; width: 100%; height: auto; background: #edf2f7; }
.nothumb { color: var(--muted); font-size: 11px; display: flex; align-items: center;
           justify-content: center; }
.shot { font-size: 12px; }
.shot .index { color: var(--muted); }
figcaption { font-size: 14px; }
.sheet:not(.with-text) figcaption { font-size: 13px; margin-top: 2px; }
figcaption .sub { margin: 0 0 4px; color: #2d3748; }
figcaption .sub.speech { font-style: italic; }
ol.transcript { list-style: none; padding: 0; max-width: 60em; }
ol.transcript li { margin: 0 0 6px; }
ol.transcript li.speech { font-style: italic; }
ol.transcript .cue-time { color: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; margin-right: 6px; }
figcaption .page-text { white-space: pre-line; }
figcaption details.page-rest summary { color: var(--muted); cursor: pointer; font-size: 12px; }
figcaption .sub.speech::before { content: "\201C"; }
.transcript-note { color: #4a5568; font-size: 0.9em; }
figcaption .cue-time { color: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; }
details.media > summary { cursor: pointer; color: var(--muted); }
header .folder { font-size: 12px; word-break: break-all; }
table.index .excerpt { word-break: normal; overflow-wrap: anywhere; margin: 4px 0 0; color: #2d3748; font-size: 13px; max-width: 60ch; }
table.index .excerpt .prompt { color: var(--muted); font-size: 11px; text-transform: uppercase; }
.search { margin: 12px 0; }
.search input { width: 100%; max-width: 640px; font: inherit; font-size: 16px; padding: 6px 10px;
                border: 1px solid #cbd5e0; border-radius: 6px; }
.search .count { color: var(--muted); margin: 6px 0; }
ol.search-results { padding-left: 22px; }
ol.search-results li { margin: 6px 0; }
ol.search-results .snippet { display: block; color: #2d3748; font-size: 13px; }
ol.search-results mark { background: var(--hl); }
details.noop-runs { margin: 16px 0; }
details.noop-runs > summary { cursor: pointer; color: var(--muted); }
.figures { display: flex; flex-wrap: wrap; gap: 24px; }
figure.plot { margin: 8px 0; }
nav.pager { margin: 8px 0; }
nav.pager .current { font-weight: 700; }
ul.failures li.answered { color: var(--muted); }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; border-top: 1px solid var(--line);
         padding-top: 8px; }
@media print { .sheet { grid-template-columns: repeat(5, 1fr); } nav { display: none; } }
)css";

}  // namespace reel::jobs::report
