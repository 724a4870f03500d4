// Stops `npm test` and `npm start` (their pre scripts) with one line naming the fix when the `node` running them is
// older than package.json's engines floor, before anything is built or run. It must itself run on any old Node:
// plain CommonJS, `var`, no syntax newer than the oldest Node anyone still has.
'use strict';
var fs = require('fs');
var path = require('path');

// The Node 24 LTS release the project is tested on (.ci/run NODE24_RELEASE, the Docker image; a unit test keeps them equal).
var RECOMMENDED = '24.21.0';

var engines = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).engines || {};
var floor = /^>=\s*(\d+)\.(\d+)(?:\.(\d+))?$/.exec(engines.node || '');
if (!floor) {
  process.stderr.write('check-node: package.json engines.node is not a plain ">=x.y" floor: ' + engines.node + '\n');
  process.exit(1);
}
var want = [Number(floor[1]), Number(floor[2]), Number(floor[3] || 0)];
var have = process.versions.node.split('.').map(Number);
var older = false;
for (var i = 0; i < 3; i++) {
  if (have[i] !== want[i]) {
    older = have[i] < want[i];
    break;
  }
}
if (older) {
  var line = 'hermes-aep needs Node >= ' + want.slice(0, floor[3] ? 3 : 2).join('.') + ' (24 LTS recommended); ';
  line += 'this is node ' + process.version + ' at ' + process.execPath + '. ';
  line += 'Get it: eval "$(scripts/provision-node.sh ' + RECOMMENDED + ' --export)" (or nvm install 24)';
  process.stderr.write(line + '\n');
  process.exit(1);
}
