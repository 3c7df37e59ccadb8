/**
 * The sales chart, drawn on the server as SVG (no script, no inline style: classes only), so it
 * shows under the console's Content-Security-Policy and in a screenshot.
 */
import { html, money, type Html } from './html.js';

export interface ChartBar {
  label: string;
  milli: bigint;
  count: number;
}

const WIDTH = 720;
const HEIGHT = 200;
const PAD = 24;

export function salesChart(bars: ChartBar[], currency: string): Html {
  if (bars.length === 0) return html`<p class="empty">No sales in this period.</p>`;
  const max = bars.reduce((m, b) => (b.milli > m ? b.milli : m), 1n);
  const slot = (WIDTH - 2 * PAD) / bars.length;
  const barWidth = Math.max(2, Math.min(40, slot * 0.7));
  const drawn = bars.map((b, i) => {
    // A bar's height needs no exactness: the ratio in parts per million, then pixels.
    const h = Math.round(((HEIGHT - 2 * PAD) * Number((b.milli * 1_000_000n) / max)) / 1_000_000);
    const x = Math.round(PAD + i * slot + (slot - barWidth) / 2);
    const y = HEIGHT - PAD - h;
    return html`<g
      ><title>${b.label}: ${money(b.milli)} ${currency}, ${b.count} sales</title>
      <rect class="bar" x="${x}" y="${y}" width="${Math.round(barWidth)}" height="${h}"></rect>
      ${bars.length <= 31 ? html`<text class="axis" x="${x}" y="${HEIGHT - 6}">${b.label.slice(5)}</text>` : html``}</g
    >`;
  });
  return html`<svg
    class="chart"
    role="img"
    aria-label="paid sales per day in ${currency}"
    viewBox="0 0 ${WIDTH} ${HEIGHT}"
    width="${WIDTH}"
    height="${HEIGHT}"
  >
    <text class="axis" x="${PAD}" y="14">${money(max)} ${currency}</text>
    <line class="baseline" x1="${PAD}" y1="${HEIGHT - PAD}" x2="${WIDTH - PAD}" y2="${HEIGHT - PAD}"></line>
    ${drawn}
  </svg>`;
}
