// Draws one trace, as Jaeger's HTTP API (/api/traces/{id}) returned it, as an
// SVG waterfall: one row per span (indented under its CHILD_OF parent), bars on
// the span's real times, errors in red, FOLLOWS_FROM references noted. Used to
// make the README's picture from a real e2e run:
//   E2E_TRACE_DUMP=/tmp/traces.json npm run test:e2e
//   node dist/test/tools/render-trace-svg.js /tmp/traces.json docs/trace-turn.svg
import { readFileSync, writeFileSync } from 'node:fs';

interface Tag {
  key: string;
  value: unknown;
}
interface Ref {
  refType: string;
  spanID: string;
  traceID: string;
}
interface Span {
  spanID: string;
  operationName: string;
  startTime: number;
  duration: number;
  references: Ref[];
  tags: Tag[];
}
interface Trace {
  traceID: string;
  spans: Span[];
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const tag = (s: Span, k: string) => s.tags.find((t) => t.key === k)?.value;

function render(trace: Trace): string {
  const byId = new Map(trace.spans.map((s) => [s.spanID, s]));
  const parentOf = (s: Span) => s.references.find((r) => r.refType === 'CHILD_OF' && byId.has(r.spanID))?.spanID;
  const children = new Map<string | undefined, Span[]>();
  for (const s of trace.spans) children.set(parentOf(s), [...(children.get(parentOf(s)) ?? []), s]);
  const rows: { span: Span; depth: number }[] = [];
  const walk = (id: string | undefined, depth: number) => {
    for (const s of (children.get(id) ?? []).sort((a, b) => a.startTime - b.startTime)) {
      rows.push({ span: s, depth });
      walk(s.spanID, depth + 1);
    }
  };
  walk(undefined, 0);
  const t0 = Math.min(...trace.spans.map((s) => s.startTime));
  const t1 = Math.max(...trace.spans.map((s) => s.startTime + s.duration));
  const W = 1100,
    L = 430,
    R = 20,
    H = 26,
    top = 58;
  const x = (t: number) => L + ((t - t0) / Math.max(1, t1 - t0)) * (W - L - R);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${top + rows.length * H + 40}" font-family="monospace" font-size="12">`);
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  out.push(`<text x="10" y="20" font-size="14" font-weight="bold">${esc(`trace ${trace.traceID}`)}</text>`);
  out.push(
    `<text x="10" y="40" fill="#555">${esc(`one Hermes turn, as Jaeger 2.13 returned it (${trace.spans.length} spans, ${((t1 - t0) / 1000).toFixed(1)} ms)`)}</text>`,
  );
  rows.forEach(({ span, depth }, i) => {
    const y = top + i * H;
    const error = tag(span, 'otel.status_code') === 'ERROR';
    const incomplete = tag(span, 'aep.incomplete') === true;
    const color = error
      ? '#d9534f'
      : span.operationName.startsWith('attention')
        ? '#f0ad4e'
        : span.operationName.startsWith('execute_tool')
          ? '#5bc0de'
          : '#5cb85c';
    const extra = [
      tag(span, 'error.type'),
      tag(span, 'aep.attention.answer.option') && `answer=${String(tag(span, 'aep.attention.answer.option'))}`,
      tag(span, 'aep.attention.resolution'),
      incomplete && 'incomplete',
    ]
      .filter(Boolean)
      .join(' ');
    const follows = span.references.filter((r) => r.refType === 'FOLLOWS_FROM').length;
    const label = `${span.operationName}${extra ? `  [${extra}]` : ''}${follows ? `  ↪${follows}` : ''}`;
    if (i % 2 === 0) out.push(`<rect x="0" y="${y - 16}" width="${W}" height="${H}" fill="#f6f6f6"/>`);
    out.push(`<text x="${10 + depth * 16}" y="${y}">${esc(label.slice(0, 58))}</text>`);
    const bx = x(span.startTime);
    out.push(
      `<rect x="${bx.toFixed(1)}" y="${y - 11}" width="${Math.max(2, x(span.startTime + span.duration) - bx).toFixed(1)}" height="14" rx="2" fill="${color}"/>`,
    );
  });
  const y = top + rows.length * H + 10;
  out.push(
    `<text x="10" y="${y}" fill="#555">green: run · blue: tool call · amber: attention card · red: error status · ↪n: FOLLOWS_FROM references (links)</text>`,
  );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  process.stderr.write('usage: render-trace-svg <jaeger-traces.json> <out.svg>\n');
  process.exit(2);
}
const traces = JSON.parse(readFileSync(input, 'utf8')) as Trace[];
// the richest turn: the one with the most spans
const trace = traces.sort((a, b) => b.spans.length - a.spans.length)[0];
if (!trace) throw new Error('no trace in input');
writeFileSync(output, render(trace));
