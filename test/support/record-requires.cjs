// Test-only preload: records every CommonJS module the process loads into the
// file named by RECORD_IMPORTS, so a test can prove what the shim loads.
const Module = require('node:module');
const { appendFileSync } = require('node:fs');

const file = process.env.RECORD_IMPORTS;
if (file) {
  const load = Module._load;
  Module._load = function recordLoad(request, parent, isMain) {
    appendFileSync(file, `${request}\n`);
    return load.apply(this, [request, parent, isMain]);
  };
}
