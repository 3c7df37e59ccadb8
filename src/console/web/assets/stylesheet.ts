/** /assets/console.css: the console's only stylesheet (served by the console itself; no CDN, no font download). */
export const CONSOLE_CSS = `
:root {
  color-scheme: light;
  --ink: #1d2430;
  --muted: #5b6575;
  --line: #d9dee6;
  --bad: #b3261e;
  --ok: #1e7b34;
  --accent: #1f5fbf;
}
* { box-sizing: border-box; }
body {
  margin: 0;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  color: var(--ink);
  background: #f6f7f9;
}
header {
  display: flex;
  gap: 1.5rem;
  align-items: center;
  padding: .6rem 1.2rem;
  background: #fff;
  border-bottom: 1px solid var(--line);
}
.brand { font-size: 1.05rem; }
nav { display: flex; gap: 1rem; align-items: center; flex: 1; }
nav a { color: var(--accent); text-decoration: none; }
nav a.current { font-weight: 600; border-bottom: 2px solid var(--accent); }
nav .who { margin-left: auto; color: var(--muted); }
main { padding: 1rem 1.2rem; max-width: 1400px; }
h1 { font-size: 1.3rem; margin: .2rem 0 1rem; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
table.list { border-collapse: collapse; width: 100%; background: #fff; }
table.list th, table.list td {
  border-bottom: 1px solid var(--line);
  padding: .3rem .5rem;
  text-align: left;
  vertical-align: top;
}
table.list th { background: #eef1f5; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.down td.why, .bad { color: var(--bad); font-weight: 600; }
tr.open td.state { color: var(--bad); }
tr.current td { background: #eef4ff; }
form.filters { display: flex; gap: 1rem; align-items: end; flex-wrap: wrap; margin-bottom: 1rem; }
form.inline { display: inline; }
form.login, form.stack { display: grid; gap: .6rem; max-width: 22rem; }
label { display: grid; gap: .2rem; color: var(--muted); }
label.check { display: inline-flex; align-items: center; gap: .4rem; margin-right: .8rem; }
fieldset { border: 1px solid var(--line); border-radius: 4px; }
pre#shown-once { background: #fff; border: 1px solid var(--line); padding: .5rem; overflow-x: auto; }
input, select, button, a.button {
  font: inherit;
  padding: .3rem .5rem;
  border: 1px solid var(--line);
  border-radius: 4px;
  background: #fff;
}
button, a.button { cursor: pointer; color: var(--accent); text-decoration: none; }
.error { color: var(--bad); }
.notice { color: var(--ok); }
time[title] { text-decoration: underline dotted var(--line); cursor: help; }
code {
  font: .92em ui-monospace, "DejaVu Sans Mono", monospace;
  background: #eef1f5;
  padding: 0 .25rem;
  border-radius: 3px;
}
.pager { display: flex; gap: 1rem; color: var(--muted); }
.chip {
  display: inline-block;
  padding: .1rem .5rem;
  border: 1px solid var(--line);
  border-radius: 1rem;
  background: #fff;
}
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; background: #fff; padding: .8rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
svg.chart { background: #fff; border: 1px solid var(--line); max-width: 100%; height: auto; }
svg.chart .bar { fill: var(--accent); }
svg.chart .axis { fill: var(--muted); font-size: 10px; }
svg.chart .baseline { stroke: var(--line); }
.empty { color: var(--muted); }
@media (max-width: 720px) {
  header { flex-wrap: wrap; gap: .5rem; padding: .5rem .8rem; }
  nav { flex-wrap: wrap; gap: .6rem; }
  nav .who { margin-left: 0; }
  main { padding: .8rem; }
  table.list { display: block; overflow-x: auto; }
}

/* The route's pages: planograms, stock, routes, the pick list, the visit page. */
header { flex-wrap: wrap; }
nav { flex-wrap: wrap; row-gap: .3rem; }
.scroll { overflow-x: auto; }
.muted, .hint, .meta { color: var(--muted); }
.hint { font-size: .9em; }
.own { color: var(--accent); }
.actions { display: flex; gap: .6rem; align-items: center; flex-wrap: wrap; }
form.stack.wide { max-width: 40rem; }
textarea { font: inherit; width: 100%; padding: .3rem .5rem; border: 1px solid var(--line); border-radius: 4px; }
ul.problems { background: #fff4f3; border: 1px solid #f0c4c0; padding: .6rem 1.6rem; color: var(--bad); }
.flag {
  display: inline-block;
  padding: 0 .4rem;
  border-radius: 1rem;
  background: var(--bad);
  color: #fff;
  font-size: .85em;
  font-weight: 600;
  white-space: nowrap;
}
tr.low td.level, tr.low td:first-child { color: var(--bad); font-weight: 600; }
tr.unplanned td { color: var(--muted); }
tr.skip td { color: var(--muted); }
td.strong, .strong { font-weight: 700; }
.bar {
  display: inline-block;
  position: relative;
  width: 5rem;
  height: .7rem;
  background: #e8ebf0;
  border-radius: 3px;
  overflow: hidden;
}
.bar::after { content: ""; position: absolute; left: 0; top: 0; bottom: 0; background: var(--ok); }
.bar.low::after { background: var(--bad); }
.bar-0::after { width: 0%; }
.bar-10::after { width: 10%; }
.bar-20::after { width: 20%; }
.bar-30::after { width: 30%; }
.bar-40::after { width: 40%; }
.bar-50::after { width: 50%; }
.bar-60::after { width: 60%; }
.bar-70::after { width: 70%; }
.bar-80::after { width: 80%; }
.bar-90::after { width: 90%; }
.bar-100::after { width: 100%; }
fieldset.weekdays { border: 1px solid var(--line); border-radius: 4px; display: flex; flex-wrap: wrap; gap: .6rem; }
label.check { display: inline-flex; gap: .3rem; align-items: center; color: var(--ink); }
ol.steps code { background: #eef1f5; padding: .1rem .3rem; border-radius: 3px; word-break: break-all; }
table.edit input { width: 100%; min-width: 4rem; }
.inline-label { display: inline-grid; margin-bottom: .6rem; }

/* The visit page: a phone first (390 px), thumbs on glass. */
form.visit { display: grid; gap: .8rem; max-width: 36rem; }
form.visit button.big {
  font-size: 1.15rem;
  min-height: 3.2rem;
  width: 100%;
  border-radius: 8px;
  font-weight: 600;
}
form.visit button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
ol.selections { list-style: none; margin: 0; padding: 0; display: grid; gap: .6rem; }
li.sel { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: .6rem .8rem; }
li.sel.low { border-left: 6px solid var(--bad); }
.sel-head { display: flex; gap: .6rem; align-items: baseline; font-size: 1.1rem; }
.sel-no { font-weight: 700; min-width: 2.5rem; }
.sel-name { font-weight: 600; }
.sel-figures { display: flex; gap: 1rem; color: var(--muted); margin: .2rem 0 .4rem; flex-wrap: wrap; }
.sel-figures .put-in { color: var(--ink); }
label.count { grid-template-columns: 1fr 7rem; align-items: center; }
label.count input { font-size: 1.3rem; min-height: 2.8rem; text-align: center; }
label.note textarea { font-size: 1rem; }
.visit-notice { font-size: 1.1rem; font-weight: 600; }

@media (max-width: 600px) {
  header { gap: .5rem; padding: .5rem .7rem; }
  main { padding: .7rem; }
  nav { gap: .7rem; }
  nav .who { margin-left: 0; }
  table.list { font-size: 13px; }
}

/* The pick list (and any page) printed: A4, the page's content only. */
@page { size: A4; margin: 12mm; }
@media print {
  body { background: #fff; font-size: 10pt; }
  header, form, .no-print, .hint, nav { display: none !important; }
  main { padding: 0; max-width: none; }
  h1 { font-size: 14pt; margin: 0 0 2mm; }
  h2 { font-size: 12pt; margin: 4mm 0 2mm; }
  h3 { font-size: 11pt; margin: 3mm 0 1mm; }
  table.list th { background: #eee; }
  table.list th, table.list td { border: 1px solid #999; padding: 1mm 2mm; }
  td.tick, th.tick { width: 14mm; }
  tr, section.stop { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
}
`;
