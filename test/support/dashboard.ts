import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { ROOT } from './paths.js';

/**
 * The Grafana dashboard shipped in deploy/grafana, read the way the unit and
 * e2e tests need it: every panel, every PromQL expression with Grafana's
 * variables substituted, and what each expression names (metrics, labels),
 * from the Prometheus project's own PromQL grammar (lezer-promql).
 */

export const DASHBOARD_FILE = path.join(ROOT, 'deploy', 'grafana', 'dashboards', 'hermes-aep.json');

export interface Link {
  title: string;
  url: string;
}
export interface Target {
  refId: string;
  expr: string;
  datasource?: { type?: string; uid?: string };
}
export interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  targets?: Target[];
  links?: Link[];
  fieldConfig?: { defaults?: { links?: Link[]; unit?: string } };
  panels?: Panel[];
  gridPos?: { h: number; w: number; x: number; y: number };
}
export interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating?: { list: { name: string; type: string; query?: unknown; current?: { value?: unknown } }[] };
}

export function loadDashboard(file = DASHBOARD_FILE): Dashboard {
  return JSON.parse(readFileSync(file, 'utf8')) as Dashboard;
}

/** Every panel that is not a row (rows' nested panels included). */
export function dataPanels(d: Dashboard): Panel[] {
  return d.panels.flatMap((p) => (p.type === 'row' ? (p.panels ?? []) : [p]));
}

/**
 * Grafana's variables replaced by values PromQL accepts: `$__rate_interval`
 * and `$__range` by the windows given (defaults fine for parsing), `$job` by
 * the service. Anything else starting with `$` is left, so a parse fails on it.
 */
export function substitute(expr: string, v: { job?: string; rateInterval?: string; range?: string } = {}): string {
  return expr
    .replaceAll('$__rate_interval', v.rateInterval ?? '1m')
    .replaceAll('$__range', v.range ?? '1h')
    .replaceAll('${job}', v.job ?? 'hermes-aep')
    .replaceAll('$job', v.job ?? 'hermes-aep');
}

export interface ExprUse {
  /** metric names of every vector selector (an identifier, or a `__name__="…"` matcher) */
  metrics: Set<string>;
  /** label names in matchers, `by`/`without` and `on`/`ignoring`/`group_*` lists */
  labels: Set<string>;
  /** the label matchers as written, `name op "value"` (for value checks against the contract) */
  matchers: { label: string; op: string; value: string }[];
  /** text of every syntax-error node (empty when the expression parses) */
  errors: string[];
}

/** Parse one (substituted) PromQL expression and collect what it refers to. */
export function analyse(expr: string): ExprUse {
  const tree = parser.parse(expr);
  const use: ExprUse = { metrics: new Set(), labels: new Set(), matchers: [], errors: [] };
  const text = (from: number, to: number) => expr.slice(from, to);
  tree.iterate({
    enter: (n) => {
      if (n.type.isError) {
        use.errors.push(`at ${n.from}: "${text(Math.max(0, n.from - 10), n.to + 10)}"`);
        return;
      }
      switch (n.name) {
        case 'Identifier':
          if (n.node.parent?.name === 'VectorSelector') use.metrics.add(text(n.from, n.to));
          break;
        case 'LabelName':
          use.labels.add(text(n.from, n.to));
          break;
        case 'UnquotedLabelMatcher': {
          const label = n.node.getChild('LabelName');
          const op = n.node.getChild('MatchOp');
          const value = n.node.getChild('StringLiteral');
          if (label && op && value) {
            const m = { label: text(label.from, label.to), op: text(op.from, op.to), value: JSON.parse(text(value.from, value.to)) as string };
            if (m.label === '__name__' && m.op === '=') use.metrics.add(m.value);
            use.matchers.push(m);
          }
          break;
        }
      }
    },
  });
  use.labels.delete('__name__');
  return use;
}

/** Every expression of the dashboard with the panel it belongs to. */
export function dashboardExprs(d: Dashboard): { panel: Panel; target: Target }[] {
  return dataPanels(d).flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel, target })));
}

/** Every link of a panel: its panel links and its fields' data links. */
export function panelLinks(p: Panel): Link[] {
  return [...(p.links ?? []), ...(p.fieldConfig?.defaults?.links ?? [])];
}
