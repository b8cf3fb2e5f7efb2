"""The report's style sheet (a leaf: the page, robid.report._html, and the notebook view of a section,
robid.report.section, both use it)."""

CSS = """
:root { --fg: #1d232b; --muted: #5b6570; --line: #d8dde3; --zebra: #f5f7f9; --accent: #1f5fa8;
        --good: #1a7f37; --good-bg: #e4f4e8; --warn: #8a5a00; --warn-bg: #fff3d6;
        --bad: #b42318; --bad-bg: #fde8e6; --info: #35536f; --info-bg: #e8eef5; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg);
       margin: 0; background: #fff; }
main { max-width: 1320px; margin: 0 auto; padding: 0.6rem 1.5rem 4rem; }
header.page { border-bottom: 3px solid var(--accent); margin-bottom: 0.6rem; }
header.page h1 { font-size: 1.45rem; margin: 0.2rem 0 0.1rem; }
header.page p { color: var(--muted); margin: 0.2rem 0 0.8rem; }
nav.toc { background: var(--zebra); border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem 1rem;
          margin-bottom: 1.5rem; }
nav.toc ol { margin: 0.2rem 0; padding-left: 1.4rem; columns: 2; }
nav.toc a { color: var(--accent); text-decoration: none; }
h2 { font-size: 1.35rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
h3 { font-size: 1.1rem; margin: 1.4rem 0 0.5rem; }
p.note, p.caption, .muted { color: var(--muted); }
p.caption { font-size: 0.9rem; margin-top: 0.2rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #eef1f4; text-align: left; font-weight: 600; }
tbody tr:nth-child(even) { background: var(--zebra); }
td.cls, td.unit { white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.expr { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.76rem; min-width: 16rem;
          max-width: 30rem; overflow-wrap: anywhere; color: var(--muted); }
td.expr code.name { font-size: 0.88rem; color: var(--fg); font-weight: 600; }
td.small { font-size: 0.8rem; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.82rem; }
pre { background: var(--zebra); border: 1px solid var(--line); padding: 0.5rem 0.7rem; white-space: pre-wrap;
      overflow-wrap: anywhere; }
/* wide tables (the parameter table, many runs or joints) scroll sideways inside the page instead of being cut off */
.table-wrap { overflow-x: auto; max-width: 100%; margin: 0.5rem 0 1rem; }
.table-wrap > table { margin: 0; }
section > table, details > table { display: block; overflow-x: auto; max-width: 100%; }
figure { margin: 0.8rem 0 1.4rem; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 0.9rem; margin-top: 0.3rem; }
.verdicts { display: grid; grid-template-columns: repeat(auto-fit, minmax(330px, 1fr)); gap: 0.8rem; }
.verdict { border: 1px solid var(--line); border-left-width: 6px; border-radius: 6px; padding: 0.6rem 0.9rem; }
.verdict h3 { margin: 0 0 0.3rem; font-size: 1.02rem; }
.verdict ul { margin: 0.3rem 0 0; padding-left: 1.1rem; }
.badge { display: inline-block; border-radius: 4px; padding: 0 0.45rem; font-size: 0.78rem; font-weight: 700;
         letter-spacing: 0.03em; vertical-align: 0.1em; }
.good { border-left-color: var(--good); } .badge.good, td.good { background: var(--good-bg); color: var(--good); }
.warn { border-left-color: #d89a00; } .badge.warn, td.warn { background: var(--warn-bg); color: var(--warn); }
.bad { border-left-color: var(--bad); } .badge.bad, td.bad { background: var(--bad-bg); color: var(--bad); }
.info { border-left-color: var(--info); } .badge.info, td.info { background: var(--info-bg); color: var(--info); }
tr.flag td { background: var(--bad-bg); }
details summary { cursor: pointer; color: var(--accent); }
details.section > summary { list-style: none; }
details.section > summary::-webkit-details-marker { display: none; }
details.section > summary h2::before { content: "\\25B8  "; color: var(--accent); }
details.section[open] > summary h2::before { content: "\\25BE  "; }
section { margin: 1.2rem 0; }
/* the first screen: verdicts and next steps beside the heat map of every run and joint */
.overview { display: grid; grid-template-columns: minmax(0, 5fr) minmax(0, 6fr); gap: 1rem; align-items: start; }
.overview h3 { margin: 0 0 0.2rem; font-size: 0.98rem; }
.verdict.compact { padding: 0.35rem 0.7rem; margin-bottom: 0.45rem; font-size: 0.88rem; line-height: 1.3; }
.verdict.compact details.why summary { font-size: 0.8rem; }
.verdict.compact ul { font-size: 0.82rem; }
.next { border: 1px solid var(--line); border-radius: 6px; padding: 0.35rem 0.7rem; font-size: 0.86rem; }
.next ol { margin: 0.2rem 0; padding-left: 1.2rem; }
table.heat { font-size: 0.76rem; margin: 0; }
table.heat th, table.heat td { padding: 0.05rem 0.35rem; line-height: 1.25; }
table.heat td.run { white-space: nowrap; max-width: 17rem; overflow: hidden; text-overflow: ellipsis; }
table.heat td.cmp { white-space: nowrap; font-weight: 600; }
table.heat span.role { color: var(--muted); font-size: 0.7rem; }
.badge.rest, td.rest { background: #eceff2; color: #7a838c; }
@media (max-width: 900px) { .overview { grid-template-columns: minmax(0, 1fr); } }
@media print { nav.toc { display: none; } section { break-inside: avoid-page; }
               .table-wrap { overflow-x: visible; } table { font-size: 0.7rem; } td.expr { max-width: 18rem; } }
"""
