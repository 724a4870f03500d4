// The house's import boundaries, checked in `npm test` (`npm run lint:imports`).
// Each folder of src/ may import only the folders listed for it: the floors of
// docs/design.md, lowest first. An import not listed is an arrow that runs back
// up (or sideways into a room it has no business in) and fails the check.
// CommonJS because dependency-cruiser reads its configuration with require().

/** folder -> the folders it may import (besides itself) */
const FLOORS = {
  core: [],
  util: [],
  hermes: ['core'],
  aep: ['core'],
  capture: ['core', 'util', 'aep'],
  transport: ['core', 'util'],
  config: ['core', 'util', 'capture', 'transport'],
  usage: ['core', 'util', 'aep', 'config'],
  mapping: ['core', 'util', 'aep', 'capture', 'hermes', 'usage'],
  identity: ['core', 'util', 'aep', 'capture', 'usage'],
  bus: ['core', 'aep'],
  history: ['core', 'util', 'aep', 'bus'],
  otel: ['core', 'util', 'aep', 'capture', 'config', 'bus'],
  stream: ['core', 'util', 'aep', 'capture', 'config', 'transport', 'history', 'bus'],
  control: ['core', 'util', 'aep', 'capture', 'mapping', 'identity', 'stream', 'bus'],
  relay: ['core', 'util', 'aep', 'config', 'stream'],
  state: ['core', 'util', 'aep', 'history', 'identity', 'mapping', 'otel', 'bus'],
  tail: ['core', 'util', 'aep', 'capture', 'config', 'history'],
  'control-cli': ['core', 'util', 'aep', 'config', 'tail'],
  install: ['core', 'util', 'config', 'hermes', 'transport'],
  demo: ['core', 'util', 'hermes', 'aep', 'config', 'history', 'otel', 'tail'],
  'ui-server': ['core', 'util', 'aep', 'config', 'transport', 'stream', 'control-cli'],
  shim: [],
  daemon: [
    'core',
    'util',
    'hermes',
    'aep',
    'capture',
    'transport',
    'config',
    'usage',
    'mapping',
    'identity',
    'bus',
    'history',
    'otel',
    'stream',
    'control',
    'relay',
    'state',
    'ui-server',
  ],
};

const floorRules = Object.entries(FLOORS).map(([folder, allowed]) => ({
  name: `floor-${folder}`,
  comment: `src/${folder}/ may import only ${allowed.length ? allowed.map((a) => `src/${a}/`).join(', ') : 'nothing of the project'} (docs/design.md, the floors)`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: '^src/', pathNot: [`^src/(${[folder, ...allowed].join('|')})/`] },
}));

/** folders other folders enter through one door */
const doors = ['history', 'otel'].map((folder) => ({
  name: `door-${folder}`,
  comment: `outside src/${folder}/, import it through src/${folder}/index.ts only`,
  severity: 'error',
  from: { path: '^src/', pathNot: `^src/${folder}/` },
  to: { path: `^src/${folder}/`, pathNot: `^src/${folder}/index\\.ts$` },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import cycle, of any length, type-only imports included',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'root-only-from-cli',
      comment: 'src/daemon/ is the composition root: only the CLI entry (src/cli.ts) imports it',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/daemon/', '^src/cli\\.ts$'] },
      to: { path: '^src/daemon/' },
    },
    {
      name: 'no-unknown-folder',
      comment: 'every folder of src/ has a floor here: a new folder is placed on purpose',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: [`^src/(${Object.keys(FLOORS).join('|')})/`] },
      to: {},
    },
    {
      name: 'otel-reads-settings-only',
      comment: 'of src/config/, src/otel/ uses the env reader alone (its loaders report through it); the settings catalogue is src/daemon/settings.ts',
      severity: 'error',
      from: { path: '^src/otel/' },
      to: { path: '^src/config/', pathNot: '^src/config/read-env\\.ts$' },
    },
    ...floorRules,
    ...doors,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    // type-only imports are arrows too: a type can tie two rooms as tightly as a value
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.build.json' },
  },
};
