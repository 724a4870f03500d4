// Draws the Grafana dashboard's panels as an SVG from real Prometheus query
// results: every panel at its gridPos, each target's expression evaluated by a
// real Prometheus (query_range over the window), time series as lines, stat
// panels as their latest value. Grafana itself cannot run here, so this is how
// the README's picture is made from a real run (its layout, titles,
// expressions and legends are the dashboard's own; its look is not Grafana's):
//   E2E_DASHBOARD_PICTURE=$PWD/docs/dashboard.svg npx vitest run --project e2e test/e2e/metrics-pipeline.test.ts
// (the metrics pipeline test draws it from its real Hermes session), or by hand:
//   node dist/test/tools/render-dashboard-svg.js <dashboard.json> <prometheus url> <out.svg> <start s> <end s> [job]
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { substitute } from '../support/dashboard.js';

interface Target {
  expr?: string;
  legendFormat?: string;
  refId?: string;
}
interface Panel {
  type: string;
  title?: string;
  gridPos?: { x: number; y: number; w: number; h: number };
  targets?: Target[];
  panels?: Panel[];
}
interface Series {
  metric: Record<string, string>;
  values: [number, string][];
}
interface Drawn {
  label: string;
  points: [number, number][];
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const COLORS = ['#7eb26d', '#eab839', '#6ed0e0', '#ef843c', '#e24d42', '#1f78c1', '#ba43a9', '#705da0', '#508642', '#cca300'];
const COL = 50;
const ROW = 32;

/** Grafana's `{{label}}` legend substitution; without a format, the series' labels. */
function legend(format: string | undefined, metric: Record<string, string>): string {
  if (format && format !== '__auto') return format.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_m, k: string) => metric[k] ?? '');
  const labels = Object.entries(metric).filter(([k]) => k !== '__name__' && k !== 'job' && k !== 'instance');
  return labels.length ? labels.map(([k, v]) => `${k}=${v}`).join(', ') : (metric.__name__ ?? 'value');
}

async function queryRange(prom: string, expr: string, start: number, end: number, step: number): Promise<Series[]> {
  const u = new URL('/api/v1/query_range', prom);
  u.search = new URLSearchParams({ query: expr, start: String(start), end: String(end), step: String(step) }).toString();
  const r = (await (await fetch(u)).json()) as { status: string; error?: string; data?: { result: Series[] } };
  if (r.status !== 'success') throw new Error(`prometheus refused ${JSON.stringify(expr)}: ${r.error}`);
  return r.data?.result ?? [];
}

function flatten(panels: readonly Panel[]): Panel[] {
  return panels.flatMap((p) => (p.type === 'row' ? (p.panels ?? []) : [p]));
}

function drawPanel(p: Panel, drawn: Drawn[], start: number, end: number): string {
  const g = p.gridPos ?? { x: 0, y: 0, w: 12, h: 8 };
  const [x, y, w, h] = [g.x * COL, g.y * ROW + 40, g.w * COL, g.h * ROW];
  const out = [
    `<rect x="${x + 4}" y="${y + 4}" width="${w - 8}" height="${h - 8}" rx="3" fill="#181b1f" stroke="#2c3235"/>`,
    `<text x="${x + 14}" y="${y + 22}" fill="#ccccdc" font-size="13" font-weight="bold">${esc(p.title ?? '')}</text>`,
  ];
  const values = drawn.flatMap((d) => d.points.map(([, v]) => v));
  if (p.type === 'stat' || p.type === 'gauge' || p.type === 'bargauge' || p.type === 'table' || p.type === 'piechart') {
    drawn.slice(0, 6).forEach((d, i) => {
      const last = d.points.at(-1)?.[1];
      const shown = last === undefined ? 'no data' : Number.isInteger(last) ? String(last) : last.toPrecision(3);
      const cx = x + 14 + (i % 3) * ((w - 28) / 3);
      const cy = y + 56 + Math.floor(i / 3) * 52;
      out.push(`<text x="${cx}" y="${cy}" fill="${COLORS[i % COLORS.length]}" font-size="22" font-weight="bold">${esc(shown)}</text>`);
      out.push(`<text x="${cx}" y="${cy + 16}" fill="#8e8e8e" font-size="10">${esc(d.label.slice(0, 40))}</text>`);
    });
    if (drawn.length === 0) out.push(`<text x="${x + 14}" y="${y + 56}" fill="#8e8e8e">no data</text>`);
    return out.join('\n');
  }
  const [px, py, pw, ph] = [x + 44, y + 34, w - 60, h - 8 - 34 - 40];
  const lo = Math.min(0, ...values);
  const hi = Math.max(lo + 1e-9, ...values);
  const sx = (t: number) => px + ((t - start) / Math.max(end - start, 1)) * pw;
  const sy = (v: number) => py + ph - ((v - lo) / (hi - lo)) * ph;
  out.push(`<line x1="${px}" y1="${py + ph}" x2="${px + pw}" y2="${py + ph}" stroke="#2c3235"/>`);
  out.push(`<text x="${x + 10}" y="${py + 8}" fill="#8e8e8e" font-size="10">${esc(hi.toPrecision(3))}</text>`);
  out.push(`<text x="${x + 10}" y="${py + ph}" fill="#8e8e8e" font-size="10">${esc(lo.toPrecision(3))}</text>`);
  drawn.slice(0, 10).forEach((d, i) => {
    const c = COLORS[i % COLORS.length];
    const pts = d.points.map(([t, v]) => `${sx(t).toFixed(1)},${sy(v).toFixed(1)}`).join(' ');
    if (d.points.length === 1) out.push(`<circle cx="${sx(d.points[0]![0]).toFixed(1)}" cy="${sy(d.points[0]![1]).toFixed(1)}" r="2.5" fill="${c}"/>`);
    else out.push(`<polyline points="${pts}" fill="none" stroke="${c}" stroke-width="1.5"/>`);
    const lx = x + 14 + (i % 2) * ((w - 28) / 2);
    const ly = y + h - 34 + Math.floor(i / 2) * 12;
    if (ly < y + h - 6) out.push(`<text x="${lx}" y="${ly}" fill="${c}" font-size="10">■ ${esc(d.label.slice(0, 48))}</text>`);
  });
  if (drawn.length === 0) out.push(`<text x="${px + pw / 2 - 20}" y="${py + ph / 2}" fill="#8e8e8e">no data</text>`);
  return out.join('\n');
}

/** The SVG of `dashboard` (Grafana JSON) over `[start, end]` (epoch seconds), every expression evaluated by `prometheus`. */
export async function renderDashboard(
  dashboard: { title?: string; panels?: Panel[] },
  prometheus: string,
  start: number,
  end: number,
  job = 'hermes-aep',
): Promise<string> {
  const panels = flatten(dashboard.panels ?? []);
  const step = Math.max(1, Math.round((end - start) / 120));
  const vars = { job, rateInterval: `${Math.max(4 * step, 15)}s`, range: `${Math.max(end - start, 60)}s` };
  const body: string[] = [];
  for (const p of panels) {
    const drawn: Drawn[] = [];
    for (const t of p.targets ?? []) {
      if (!t.expr) continue;
      for (const s of await queryRange(prometheus, substitute(t.expr, vars), start, end, step))
        drawn.push({
          label: legend(t.legendFormat, s.metric),
          points: s.values.map(([ts, v]) => [ts, Number(v)] as [number, number]).filter(([, v]) => Number.isFinite(v)),
        });
    }
    body.push(drawPanel(p, drawn, start, end));
  }
  for (const r of (dashboard.panels ?? []).filter((p) => p.type === 'row'))
    body.push(`<text x="10" y="${(r.gridPos?.y ?? 0) * ROW + 40 + 22}" fill="#ccccdc" font-size="14">${esc(r.title ?? '')}</text>`);
  const height = Math.max(...panels.map((p) => ((p.gridPos?.y ?? 0) + (p.gridPos?.h ?? 8)) * ROW)) + 48;
  const when = `${new Date(start * 1000).toISOString()} .. ${new Date(end * 1000).toISOString()}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${24 * COL}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#111217"/>`,
    `<text x="10" y="24" fill="#ccccdc" font-size="16" font-weight="bold">${esc(dashboard.title ?? 'dashboard')}</text>`,
    `<text x="${24 * COL - 10}" y="24" fill="#8e8e8e" text-anchor="end">real Prometheus query results, ${esc(when)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [dash, prom, out, start, end, job] = process.argv.slice(2);
  if (!dash || !prom || !out || !start || !end) {
    console.error('usage: render-dashboard-svg <dashboard.json> <prometheus url> <out.svg> <start s> <end s> [job]');
    process.exit(2);
  }
  const svg = await renderDashboard(JSON.parse(readFileSync(dash, 'utf8')) as { panels?: Panel[] }, prom, Number(start), Number(end), job);
  writeFileSync(out, svg);
}
