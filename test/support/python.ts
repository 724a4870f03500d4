import { execFileSync } from 'node:child_process';

/**
 * The checks against Python's own behaviour (PyYAML's reading of config.yaml,
 * Python's datetime formatting of Hermes's consent mtime) need python3, and
 * some PyYAML. They are never skipped: a machine without them fails here with
 * what to install (`.ci/run` installs PyYAML when the interpreter lacks it).
 */
export function requirePython(module?: string): void {
  try {
    execFileSync('python3', ['-c', module ? `import ${module}` : 'pass'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      module
        ? `this test needs python3 with the ${module} module (python3 -m pip install ${module === 'yaml' ? 'pyyaml' : module})`
        : 'this test needs python3 on PATH',
    );
  }
}
