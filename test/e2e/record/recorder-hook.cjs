'use strict';
// The fixture recorder's shell hook: appends its stdin, verbatim and as one
// line, to $HERMES_AEP_REC_FILE and prints `{}`. With HERMES_AEP_REC_BLOCK=1
// it answers pre_tool_call with a block instead. Node builtins only.
const fs = require('node:fs');

const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const raw = Buffer.concat(chunks).toString('utf8').trim();
  // one write(2) on an O_APPEND descriptor: concurrent hooks never interleave a line
  const fd = fs.openSync(process.env.HERMES_AEP_REC_FILE, 'a', 0o600);
  fs.writeSync(fd, `${raw}\n`);
  fs.closeSync(fd);
  let hook = '';
  try {
    hook = JSON.parse(raw).hook_event_name;
  } catch {
    // recorded as received; nothing to decide
  }
  const block = process.env.HERMES_AEP_REC_BLOCK === '1' && hook === 'pre_tool_call';
  process.stdout.write(block ? JSON.stringify({ action: 'block', message: 'Blocked by the hermes-aep recorder' }) : '{}');
});
