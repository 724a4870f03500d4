// Makes the README's dashboard picture from a real run: the real shim, daemon, collector (the shipped
// otel-collector.yaml), Jaeger and Prometheus (the repository's prometheus.yml) as local processes, fed the scripted
// session (test/support/scripted-session.ts: tools that work, fail and are denied, approvals, clarify cards, a
// subagent, model calls) over and over for a few minutes, with a person's pauses before each approval answer and
// clarify reply; then the dashboard drawn from Prometheus (render-dashboard-svg.ts).
//   eval "$(scripts/provision-otel.sh | sed 's/^/export E2E_/')"
//   npm run build && node dist/test/tools/dashboard-picture.js 5 docs/dashboard.svg
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCollector, startJaeger, startPrometheus, stopAllServices } from '../e2e/support/services.js';
import { loadDashboard } from '../support/dashboard.js';
import { runShim, startDaemonProcess } from '../support/processes.js';
import { scriptedSession } from '../support/scripted-session.js';
import { renderDashboard } from './render-dashboard-svg.js';

const minutes = Number(process.argv[2] ?? 5);
const out = process.argv[3] ?? 'dashboard.svg';
const jaeger = await startJaeger();
const collector = await startCollector({ jaegerGrpcPort: jaeger.ports.otlpGrpc });
const prometheus = await startPrometheus({ target: collector.prometheusTarget, scrapeInterval: '2s' });
const daemon = await startDaemonProcess({
  AEP_PORT: '',
  OTEL_TRACES_EXPORTER: 'otlp',
  OTEL_METRICS_EXPORTER: 'otlp',
  OTEL_LOGS_EXPORTER: 'otlp',
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpHttpUrl,
  OTEL_METRIC_EXPORT_INTERVAL: '2000',
  OTEL_SERVICE_NAME: 'hermes-aep',
});
const start = Math.floor(Date.now() / 1000);
let sessions = 0;
try {
  while (Date.now() / 1000 - start < minutes * 60) {
    const s = scriptedSession(`20261202_0900${String(sessions % 100).padStart(2, '0')}_${Math.random().toString(16).slice(2, 8)}`);
    for (const env of s.envelopes) {
      if (env.hook_event_name === 'post_approval_response') await sleep(500 + Math.random() * 6000);
      if (env.hook_event_name === 'post_tool_call' && env.tool_name === 'clarify') await sleep(300 + Math.random() * 3000);
      await runShim(JSON.stringify(env), daemon.shimEnv);
    }
    sessions++;
    await sleep(Math.random() * 8000);
  }
  // two export intervals and a scrape, so the last session is in
  await sleep(8000);
  const end = Math.floor(Date.now() / 1000);
  writeFileSync(out, await renderDashboard(loadDashboard(), prometheus.url, start, end, 'hermes-aep'));
  console.log(`${sessions} sessions, ${new Date(start * 1000).toISOString()} .. ${new Date(end * 1000).toISOString()}: ${out}`);
} finally {
  await daemon.stop();
  await stopAllServices();
}
