import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { analyse, dashboardExprs, dataPanels, DASHBOARD_FILE, loadDashboard, panelLinks, substitute, type Panel } from '../../support/dashboard.js';
import { promSeriesNames } from '../../support/metrics-contract.js';
import { ROOT } from '../../support/paths.js';

/**
 * The Grafana dashboard and its provisioning against the metrics contract:
 * every PromQL expression parses (the Prometheus project's grammar), names
 * only series and labels the contract produces behind the collector's
 * prometheus exporter, and every panel links to a Jaeger search. The
 * provisioning files parse and the dashboard's data source uids exist there.
 */

const GRAFANA = path.join(ROOT, 'deploy', 'grafana');
const dashboard = loadDashboard();
const series = promSeriesNames();
const exprs = dashboardExprs(dashboard);

interface Datasource {
  name: string;
  uid: string;
  type: string;
  url: string;
}
const datasources = (parse(readFileSync(path.join(GRAFANA, 'provisioning', 'datasources', 'datasources.yaml'), 'utf8')) as { datasources: Datasource[] })
  .datasources;

describe('the analyser itself', () => {
  it('reports a syntax error, and finds metrics and labels in selectors, by/without and matching clauses', () => {
    expect(analyse('sum(rate(x_total[1m])').errors).not.toEqual([]);
    expect(analyse('sum by (a) (rate(x_total{b="1"}[1m]))').errors).toEqual([]);
    const u = analyse('sum without (a) (x{b=~"1|2"}) / ignoring (c) group_left (d) sum by (e) ({__name__="y", f!=""})');
    expect([...u.metrics].sort()).toEqual(['x', 'y']);
    expect([...u.labels].sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(u.matchers).toContainEqual({ label: 'b', op: '=~', value: '1|2' });
  });

  it('leaves an unknown Grafana variable in place, so it fails to parse', () => {
    expect(analyse(substitute('rate(x_total[$__interval])')).errors).not.toEqual([]);
  });
});

describe('deploy/grafana/dashboards/hermes-aep.json', () => {
  it('is the only dashboard, with a fixed uid and a current schema', () => {
    expect(readdirSync(path.dirname(DASHBOARD_FILE))).toEqual(['hermes-aep.json']);
    expect(dashboard.uid).toBe('hermes-aep');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    // panel ids unique, rows first-class
    const ids = dashboard.panels.flatMap((p) => [p.id, ...(p.panels ?? []).map((c) => c.id)]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has at least one expression per data panel, and every expression parses', () => {
    for (const p of dataPanels(dashboard)) expect(p.targets?.length ?? 0, p.title).toBeGreaterThan(0);
    expect(exprs.length).toBeGreaterThan(15);
    for (const { panel, target } of exprs) expect(analyse(substitute(target.expr)).errors, `${panel.title}: ${target.expr}`).toEqual([]);
  });

  it('uses only Grafana variables it knows how to substitute', () => {
    for (const { panel, target } of exprs) {
      const vars = [...target.expr.matchAll(/\$\{?(\w+)/g)].map((m) => m[1]);
      for (const v of vars) expect(['__rate_interval', '__range', 'job'], `${panel.title}: $${v}`).toContain(v);
    }
  });

  it('names only series of the metrics contract, each with labels that series carries', () => {
    const used = new Set<string>();
    for (const { panel, target } of exprs) {
      const u = analyse(substitute(target.expr));
      expect(u.metrics.size, `${panel.title}: no metric in ${target.expr}`).toBeGreaterThan(0);
      // labels of an expression must exist on at least one of the series it selects
      const allowed = new Set([...u.metrics].flatMap((m) => [...(series.get(m)?.labels ?? [])]));
      for (const m of u.metrics) {
        expect(series.has(m), `${panel.title}: ${m} is not a contract series (${[...series.keys()].join(', ')})`).toBe(true);
        used.add(m);
      }
      for (const l of u.labels) expect(allowed.has(l), `${panel.title}: label ${l} is on none of ${[...u.metrics].join(', ')}`).toBe(true);
    }
    // the dashboard covers every metric of the contract (a histogram through any of its series)
    const covered = new Set([...used].map((m) => series.get(m)!.metric.otel));
    expect([...new Set([...series.values()].map((s) => s.metric.otel))].filter((m) => !covered.has(m))).toEqual([]);
  });

  it('compares enum labels only with values the contract defines', () => {
    for (const { panel, target } of exprs) {
      const u = analyse(substitute(target.expr));
      for (const m of u.matchers) {
        for (const name of u.metrics) {
          const contract = series.get(name)!.metric;
          const enumValues = Object.entries(contract.values ?? {}).find(([otel]) => otel.replaceAll('.', '_') === m.label)?.[1];
          if (!enumValues || m.value === '') continue;
          const wanted = m.op.includes('~') ? m.value.split('|') : [m.value];
          for (const w of wanted) expect(enumValues, `${panel.title}: ${m.label}${m.op}"${m.value}"`).toContain(w);
        }
      }
    }
  });

  it('selects the service through $job in every selector', () => {
    for (const { panel, target } of exprs) {
      const u = analyse(substitute(target.expr, { job: 'JOB' }));
      const selectors = (target.expr.match(/[a-z_]+\{/g) ?? []).length;
      expect(u.matchers.filter((m) => m.label === 'job' && m.value === 'JOB').length, `${panel.title}: ${target.expr}`).toBe(selectors);
    }
  });

  it('queries the provisioned Prometheus data source in every panel and target', () => {
    const prom = datasources.find((d) => d.type === 'prometheus')!;
    for (const p of dataPanels(dashboard)) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: prom.uid });
      for (const t of p.targets ?? []) expect(t.datasource ?? p.datasource, p.title).toEqual({ type: 'prometheus', uid: prom.uid });
    }
  });

  it('links every panel to a Jaeger search of the selected service, over the dashboard time range', () => {
    const isJaegerSearch = (url: string) => {
      const [base, query] = url.split('?') as [string, string | undefined];
      if (base !== '${jaeger_ui}/search' || !query) return false;
      const params = new URLSearchParams(query);
      return params.get('service') === '${job}' && params.get('start') === '${__from}000' && params.get('end') === '${__to}000';
    };
    const withoutLink = (p: Panel) => !panelLinks(p).some((l) => isJaegerSearch(l.url));
    expect(
      dataPanels(dashboard)
        .filter(withoutLink)
        .map((p) => p.title),
    ).toEqual([]);
    // every tags= parameter is JSON (what the Jaeger UI expects), operation names are the span names
    for (const p of dataPanels(dashboard)) {
      for (const l of panelLinks(p)) {
        const params = new URLSearchParams(l.url.split('?')[1]);
        const tags = params.get('tags');
        if (tags) expect(() => JSON.parse(tags) as unknown, `${p.title}: ${l.url}`).not.toThrow();
        const op = params.get('operation');
        if (op) expect(op, p.title).toMatch(/^(invoke_agent hermes|chat \S+|execute_tool \S+|attention \S+)$/);
      }
    }
    const jaegerUi = dashboard.templating?.list.find((v) => v.name === 'jaeger_ui');
    expect(jaegerUi?.query).toBe('http://127.0.0.1:16686');
  });

  it('offers $job from the daemon series, defaulting to the daemon service name', () => {
    const job = dashboard.templating?.list.find((v) => v.name === 'job');
    expect(job?.type).toBe('query');
    expect(job?.current?.value).toBe('hermes-aep');
    const source = readFileSync(path.join(ROOT, 'src', 'otel', 'span-export.ts'), 'utf8');
    expect(source).toContain("[RESOURCE_ATTR.serviceName]: 'hermes-aep'");
  });
});

describe('deploy/grafana/provisioning', () => {
  it('declares the Prometheus and Jaeger data sources with fixed uids at their compose service names', () => {
    expect(datasources.map((d) => [d.type, d.uid, d.url]).sort()).toEqual([
      ['jaeger', 'jaeger', 'http://jaeger:16686'],
      ['prometheus', 'prometheus', 'http://prometheus:9090'],
    ]);
  });

  it('loads dashboards from the directory docker-compose.yml mounts the repo dashboards at', () => {
    const dash = parse(readFileSync(path.join(GRAFANA, 'provisioning', 'dashboards', 'dashboards.yaml'), 'utf8')) as {
      providers: { type: string; options: { path: string } }[];
    };
    expect(dash.providers).toHaveLength(1);
    expect(dash.providers[0]!.type).toBe('file');
    const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { volumes?: string[]; ports?: string[]; environment?: Record<string, string>; image?: string }>;
    };
    const grafana = compose.services.grafana!;
    expect(grafana.volumes).toContain(`./deploy/grafana/dashboards:${dash.providers[0]!.options.path}:ro`);
    expect(grafana.volumes).toContain('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro');
    expect(grafana.environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH).toBe(`${dash.providers[0]!.options.path}/hermes-aep.json`);
  });

  it('compose publishes nothing beyond 127.0.0.1, pins every image, and keeps Grafana read-only', () => {
    const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { ports?: string[]; environment?: Record<string, string>; image?: string; build?: unknown }>;
    };
    for (const [name, svc] of Object.entries(compose.services)) {
      for (const p of svc.ports ?? []) expect(p, name).toMatch(/^127\.0\.0\.1:\d+:\d+$/);
      if (svc.build) continue; // built here, not pulled
      expect(svc.image, name).toMatch(/:v?\d+\.\d+\.\d+$/);
      expect(svc.image, name).not.toMatch(/:latest$/);
    }
    const env = compose.services.grafana!.environment!;
    expect(env).toMatchObject({
      GF_AUTH_ANONYMOUS_ENABLED: 'true',
      GF_AUTH_ANONYMOUS_ORG_ROLE: 'Viewer',
      GF_AUTH_DISABLE_LOGIN_FORM: 'true',
      GF_USERS_ALLOW_SIGN_UP: 'false',
    });
    expect(Object.keys(env).filter((k) => /PASSWORD|SECRET/.test(k))).toEqual([]);
    expect(compose.services.grafana!.ports).toEqual(['127.0.0.1:3000:3000']);
    expect(compose.services.prometheus!.ports).toEqual(['127.0.0.1:9090:9090']);
  });

  it("compose's Prometheus inserts the zero at a counter's start (else increase() misses every series' first increment)", () => {
    const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { command?: string[] }> };
    expect(compose.services.prometheus!.command).toContain('--enable-feature=created-timestamp-zero-ingestion');
  });
});
