// Draws the Grafana dashboard (deploy/grafana/dashboards/hermes-aep.json) as a
// static HTML page from a real Prometheus: every panel at its gridPos, every
// target queried over the window (query_range for time series, an instant
// query for stat/bar/pie panels), legends from the targets' legendFormat.
// Grafana itself does not run here; this stands in for it to make the README's
// picture from a real run:
//   E2E_DASHBOARD_HTML=/tmp/dashboard.html npx vitest run --project e2e test/e2e/metrics-pipeline.test.ts
//   # or against any Prometheus that scrapes the collector:
//   node dist/test/tools/render-dashboard.js http://127.0.0.1:9090 hermes-aep /tmp/dashboard.html 30
//   chromium --headless --screenshot=docs/dashboard.png --window-size=1600,1500 /tmp/dashboard.html
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { dataPanels, loadDashboard, substitute, type Panel } from '../support/dashboard.js';

interface Series {
  metric: Record<string, string>;
  values?: [number, string][];
  value?: [number, string];
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const COLORS = ['#73bf69', '#f2cc0c', '#8ab8ff', '#ff780a', '#f2495c', '#5794f2', '#b877d9', '#fade2a', '#37872d', '#c4162a'];
const INSTANT = new Set(['stat', 'bargauge', 'piechart']);

async function query(prom: string, params: Record<string, string>, range: boolean): Promise<Series[]> {
  const res = await fetch(`${prom}/api/v1/${range ? 'query_range' : 'query'}`, { method: 'POST', body: new URLSearchParams(params) });
  const doc = (await res.json()) as { status: string; error?: string; data?: { result: Series[] } };
  if (doc.status !== 'success') throw new Error(`${params.query}: ${doc.error}`);
  return doc.data?.result ?? [];
}

const legend = (format: string | undefined, metric: Record<string, string>) =>
  (format ?? '').replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k: string) => metric[k] ?? '').trim() || JSON.stringify(metric);

function fmt(v: number, unit: string | undefined): string {
  if (!Number.isFinite(v)) return '–';
  if (unit === 'percentunit') return `${(v * 100).toFixed(1)}%`;
  if (unit === 'currencyUSD') return `$${v < 1 ? v.toFixed(4) : v.toFixed(2)}`;
  if (unit === 's') return v < 1 ? `${(v * 1000).toFixed(0)} ms` : `${v.toFixed(2)} s`;
  return Math.abs(v) >= 1000 ? `${(v / 1000).toFixed(1)}k` : Number.isInteger(v) ? String(v) : v.toFixed(2);
}

function timeseries(lines: { name: string; points: [number, number][] }[], unit: string | undefined, w: number, h: number): string {
  const all = lines.flatMap((l) => l.points).filter(([, v]) => Number.isFinite(v));
  if (all.length === 0) return '<div class="nodata">No data</div>';
  const t0 = Math.min(...all.map(([t]) => t));
  const t1 = Math.max(...all.map(([t]) => t), t0 + 1);
  const max = Math.max(...all.map(([, v]) => v), 0) || 1;
  const [pl, pr, pt, pb] = [56, 8, 8, 18];
  const x = (t: number) => pl + ((t - t0) / (t1 - t0)) * (w - pl - pr);
  const y = (v: number) => pt + (1 - v / max) * (h - pt - pb);
  const grid = [0, 0.5, 1]
    .map(
      (f) =>
        `<line x1="${pl}" x2="${w - pr}" y1="${y(max * f)}" y2="${y(max * f)}" class="grid"/><text x="${pl - 4}" y="${y(max * f) + 4}" class="axis" text-anchor="end">${esc(fmt(max * f, unit))}</text>`,
    )
    .join('');
  const paths = lines
    .map((l, i) => {
      const pts = l.points.filter(([, v]) => Number.isFinite(v)).map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`);
      return pts.length ? `<polyline points="${pts.join(' ')}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1.6"/>` : '';
    })
    .join('');
  const times = [t0, t1].map(
    (t, i) =>
      `<text x="${i ? w - pr : pl}" y="${h - 4}" class="axis" text-anchor="${i ? 'end' : 'start'}">${new Date(t * 1000).toISOString().slice(11, 16)}</text>`,
  );
  return `<svg width="${w}" height="${h}">${grid}${paths}${times.join('')}</svg>`;
}

async function renderPanel(prom: string, p: Panel, job: string, minutes: number, cellW: number): Promise<string> {
  const end = Date.now() / 1000;
  const start = end - minutes * 60;
  const step = Math.max(1, Math.round((minutes * 60) / 120));
  const vars = { job, rateInterval: `${Math.max(4 * step, 15)}s`, range: `${minutes}m` };
  const unit = p.fieldConfig?.defaults?.unit;
  const w = (p.gridPos?.w ?? 8) * cellW - 16;
  const h = (p.gridPos?.h ?? 8) * 30 - 60;
  const body: string[] = [];
  const items: { name: string; value: number; points: [number, number][] }[] = [];
  for (const t of p.targets ?? []) {
    const expr = substitute(t.expr, vars);
    const instant = INSTANT.has(p.type);
    const res = await query(
      prom,
      instant ? { query: expr, time: String(end) } : { query: expr, start: String(start), end: String(end), step: String(step) },
      !instant,
    );
    for (const s of res) {
      const points = (s.values ?? []).map(([ts, v]) => [ts, Number(v)] as [number, number]);
      items.push({ name: legend((t as { legendFormat?: string }).legendFormat, s.metric), value: Number(s.value?.[1] ?? points.at(-1)?.[1]), points });
    }
  }
  if (INSTANT.has(p.type)) {
    body.push(
      items.length === 0
        ? '<div class="nodata">No data</div>'
        : `<div class="stats">${items.map((it, i) => `<div class="stat"><span class="v" style="color:${COLORS[i % COLORS.length]}">${esc(fmt(it.value, unit))}</span><span class="n">${esc(it.name)}</span></div>`).join('')}</div>`,
    );
  } else {
    body.push(timeseries(items, unit, w, h - Math.min(3, Math.ceil(items.length / 3)) * 16));
    body.push(
      `<div class="legend">${items.map((it, i) => `<span><i style="background:${COLORS[i % COLORS.length]}"></i>${esc(it.name)}</span>`).join('')}</div>`,
    );
  }
  const links = (p.links?.length ?? 0) + (p.fieldConfig?.defaults?.links?.length ?? 0) > 0 ? '<span class="link" title="Jaeger">↗</span>' : '';
  const g = p.gridPos!;
  return `<section style="grid-column:${g.x + 1} / span ${g.w};grid-row:${g.y + 1} / span ${g.h}"><h3>${esc(p.title)}${links}</h3>${body.join('')}</section>`;
}

/** The dashboard as one HTML page, every panel queried from `prom` for `job` over the last `minutes`. */
export async function renderDashboardHtml(prom: string, job: string, minutes = 15): Promise<string> {
  const d = loadDashboard();
  const cellW = 1600 / 24;
  const rows = d.panels.filter((p) => p.type === 'row');
  const sections = await Promise.all(dataPanels(d).map((p) => renderPanel(prom, p, job, minutes, cellW)));
  const rowHeads = rows.map((r) => `<h2 style="grid-column:1 / span 24;grid-row:${r.gridPos!.y + 1}">${esc(r.title)}</h2>`);
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(d.title)}</title><style>
body{margin:0;background:#111217;color:#ccccdc;font:13px/1.3 "DejaVu Sans",Inter,sans-serif;width:1600px}
header{padding:10px 16px;font-size:16px;border-bottom:1px solid #2a2b33}header small{color:#8e8e9e;margin-left:12px}
main{display:grid;grid-template-columns:repeat(24,1fr);grid-auto-rows:30px;gap:0;padding:4px}
section{background:#181b1f;border:1px solid #2a2b33;border-radius:3px;margin:4px;padding:6px 8px;overflow:hidden}
h2{font-size:14px;margin:6px 8px;align-self:end}h3{font-size:13px;margin:0 0 4px;font-weight:500}
.link{color:#6e9fff;margin-left:6px}.grid{stroke:#2a2b33}.axis{fill:#8e8e9e;font-size:10px}
.legend{font-size:11px;display:flex;flex-wrap:wrap;gap:2px 12px}.legend i{display:inline-block;width:12px;height:3px;margin-right:4px;vertical-align:middle}
.stats{display:flex;flex-wrap:wrap;gap:8px 24px;padding-top:8px}.stat{display:flex;flex-direction:column}.stat .v{font-size:26px}.stat .n{color:#8e8e9e}
.nodata{color:#8e8e9e;padding:24px;text-align:center}
</style></head><body><header>${esc(d.title)}<small>service ${esc(job)} · last ${minutes} min · drawn from Prometheus query results</small></header><main>${rowHeads.join('')}${sections.join('')}</main></body></html>`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [prom, job, out, minutes] = process.argv.slice(2);
  if (!prom || !job || !out) {
    console.error('usage: render-dashboard <prometheus-url> <job> <out.html> [minutes]');
    process.exit(2);
  }
  writeFileSync(out, await renderDashboardHtml(prom, job, minutes ? Number(minutes) : 15));
}
