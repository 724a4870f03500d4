#!/usr/bin/env node
// The `hermes-aep` command that `npm link` (or a global install) puts on PATH. It runs the built CLI in dist/, which
// `npm run build` (and so `npm start` and `npm test`) makes. It exists so the link can be made before the first build
// (npm links a bin only when its file exists), and so a checkout that is not built yet says so in one line.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/src/cli.js', import.meta.url);
if (existsSync(cli)) {
  await import(cli.href);
} else {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(`hermes-aep: not built yet: run \`npm run build\` (or \`npm start\`) in ${root}\n`);
  process.exitCode = 2;
}
