/**
 * The catalog page (docs/fleet.md, "The catalog document"): prepare each machine's next catalog
 * document from its planogram, download a push's documents to sign and publish them with the
 * operator's key (`qrvend fleet catalog sign`, `push`: the console holds no key), and see, per
 * machine and per push, whether each document is intended, delivered, applied or refused and why.
 */
import type { TemplateSummary } from '../../store/planogram-reads.js';
import type { MachineCatalog, PushSummary } from '../../store/catalog-queries.js';
import { html, type Html } from '../html.js';
import { canPlan, csrfField, notice, stockLink, timeText } from './route-kit.js';

export interface CatalogView {
  push: string | null;
  machines: MachineCatalog[];
  pushes: PushSummary[];
  templates: TemplateSummary[];
  user: { role: string; csrf: string };
  message: string | null;
  skipped: { machineId: string; why: string }[];
}

const STATE_TEXT: Record<MachineCatalog['state'], string> = {
  intended: 'intended (not delivered yet)',
  delivered: 'delivered, waiting for the end of a sale',
  applied: 'applied',
  superseded: 'applied, then a newer one',
  refused: 'refused',
};

/** This push's refusal; else the machine's last refusal of any document (a tampered copy, an older one). */
function whyCell(m: MachineCatalog): Html {
  const own = m.reason === null ? html`` : html`<strong>${m.reason}</strong>: ${m.message}`;
  const r = m.lastRefusal;
  if (r === null || (m.reason !== null && r.version === m.version)) return own;
  return html`${own}
    <span class="muted last-refusal"
      >last refused: version ${r.version ?? '?'}, <strong>${r.reason}</strong>: ${r.message} (${timeText(r.at)})</span
    >`;
}

function machinesTable(v: CatalogView): Html {
  if (v.machines.length === 0) return html`<p class="empty">No document prepared yet.</p>`;
  return html`<div class="scroll">
    <table class="list" id="catalog-machines">
      <thead>
        <tr>
          <th>machine</th>
          <th>version</th>
          <th>prepared</th>
          <th>state</th>
          <th>sells by</th>
          <th>waiting</th>
          <th>refused, why</th>
        </tr>
      </thead>
      <tbody>
        ${v.machines.map(
          (m) =>
            html`<tr data-machine="${m.machineId}" class="state-${m.state}">
              <td>${stockLink(m.machineId)}</td>
              <td class="num">${m.version}</td>
              <td>${timeText(m.preparedAt)}</td>
              <td class="state${m.state === 'refused' ? ' bad' : ''}">${STATE_TEXT[m.state]}</td>
              <td class="num">${m.running ?? 'site file'}</td>
              <td class="num">${m.waiting ?? ''}</td>
              <td class="why">${whyCell(m)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function pushesTable(v: CatalogView): Html {
  if (v.pushes.length === 0) return html``;
  return html`<h2>Pushes</h2>
    <table class="list" id="catalog-pushes">
      <thead>
        <tr>
          <th>prepared</th>
          <th>by</th>
          <th>machines</th>
          <th>intended</th>
          <th>delivered</th>
          <th>applied</th>
          <th>refused</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${v.pushes.map(
          (p) =>
            html`<tr class="${p.preparedAt === v.push ? 'current' : ''}">
              <td><a href="/catalog?push=${encodeURIComponent(p.preparedAt)}">${timeText(p.preparedAt, true)}</a></td>
              <td>${p.preparedBy}</td>
              <td class="num">${p.machines}</td>
              <td class="num">${p.counts.intended}</td>
              <td class="num">${p.counts.delivered}</td>
              <td class="num">${p.counts.applied + p.counts.superseded}</td>
              <td class="num${p.counts.refused > 0 ? ' bad' : ''}">${p.counts.refused}</td>
              <td><a href="/catalog/documents.json?push=${encodeURIComponent(p.preparedAt)}">documents</a></td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

function prepareForm(v: CatalogView): Html {
  return html`<h2>Prepare documents</h2>
    <form method="post" action="/catalog/prepare" class="stack wide" id="prepare-form">
      ${csrfField(v.user.csrf)}
      <label
        >For
        <select name="scope">
          <option value="*">every machine with a planogram</option>
          ${v.templates.map(
            (t) => html`<option value="template:${t.templateId}">the machines of ${t.templateId}</option>`,
          )}
          <option value="list">the machines below</option>
        </select></label
      >
      <label>Machines (one a line) <textarea name="machines" rows="2"></textarea></label>
      <button type="submit" id="prepare-submit">Prepare</button>
    </form>`;
}

function signingSteps(push: string): Html {
  const url = `/catalog/documents.json?push=${encodeURIComponent(push)}`;
  return html`<ol class="steps" id="signing-steps">
    <li><a href="${url}" id="documents-link" download>Download the documents</a> (catalog-documents.json).</li>
    <li>
      Sign them with your catalog key:
      <code>qrvend fleet catalog sign catalog-documents.json --sign-key KEY.pem --key-id ID --out signed.json</code>
    </li>
    <li>Publish them: <code>qrvend fleet catalog push signed.json</code> (each retained on its machine's topic).</li>
  </ol>`;
}

export function catalogBody(v: CatalogView): Html {
  return html`${notice(v.message)}
    ${
      v.skipped.length === 0
        ? html``
        : html`<ul class="problems" id="skipped">
            ${v.skipped.map((s) => html`<li><strong>${s.machineId}</strong>: ${s.why}</li>`)}
          </ul>`
    }
    <p>
      Each machine's catalog document carries what its screens and the gateway need of its planogram (names per
      language, measurement and unit, age limits). The console prepares it; it is signed with an operator key of the
      scope <code>catalog</code> and published from a terminal, since the console holds no key.
    </p>
    ${v.push === null ? html`` : signingSteps(v.push)}
    <section id="live">
      <h2>${v.push === null ? 'Each machine, its latest document' : html`The push of ${timeText(v.push, true)}`}</h2>
      ${machinesTable(v)} ${pushesTable(v)}
    </section>
    ${canPlan(v.user.role) ? prepareForm(v) : html``}`;
}
