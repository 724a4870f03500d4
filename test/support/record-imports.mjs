// Test-only module hook: records every module URL the process resolves into
// the file named by RECORD_IMPORTS, so a test can prove what the shim loads.
import { register } from 'node:module';
import { appendFileSync } from 'node:fs';

const file = process.env.RECORD_IMPORTS;
if (file) {
  const { port1, port2 } = new MessageChannel();
  port1.on('message', (url) => appendFileSync(file, `${url}\n`));
  port1.unref();
  register(
    'data:text/javascript,' +
      encodeURIComponent(
        'let port; export function initialize(d) { port = d.port; }' +
          'export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }',
      ),
    { data: { port: port2 }, transferList: [port2] },
  );
}
