// The environment an Executor process starts with (docs/security.md § What a function can reach). A
// function runs inside the Executor and can read its environment (`process.env`, `os.environ`), so the
// Executor gets a fixed list of harmless variables and the ones `executor.passEnv` names, never the
// Worker's own: etcd and storage credentials, TLS key paths, anything an operator exported for the Worker.

/** Passed when set: what programs need to run, find their libraries and format dates and text. */
const PASSED = new Set([
  'PATH',
  'HOME',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'TMP',
  'TEMP',
  'NODE_ENV',
  'NODE_PATH',
  'NODE_V8_COVERAGE',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONDONTWRITEBYTECODE',
  'PYTHONUNBUFFERED',
  'VIRTUAL_ENV',
  // The Executor's own knobs (docs/performance.md § Profiling; the thread's log level).
  'BLOCKX_LOG_LEVEL',
  'EXECUTOR_CPU_PROFILE',
  'EXECUTOR_TRACE',
]);

/** The locale variables (`LC_ALL`, `LC_CTYPE`, …). */
const LOCALE = /^LC_[A-Z]+$/;

/** `env` reduced to what an Executor may see: the fixed list, the locale, and `passEnv` by name. */
export function executorEnvironment(
  env: NodeJS.ProcessEnv,
  passEnv: readonly string[] = [],
): NodeJS.ProcessEnv {
  const extra = new Set(passEnv);
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (PASSED.has(name) || LOCALE.test(name) || extra.has(name))) out[name] = value;
  }
  return out;
}
