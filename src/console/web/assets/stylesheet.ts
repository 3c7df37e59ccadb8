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
`;
