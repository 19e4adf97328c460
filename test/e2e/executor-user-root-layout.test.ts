// The least-privilege layout for a project where no other user can enter, such as /root
// (docs/security.md § Executors as their own user, "Under /root"): a 0700 folder keeps `nobody` out, so
// `auto` would run the Executors as root. Giving a numeric group search on the folder (0710) and read on
// the project, and running the Executors as `65534:<that group>`, lets them run unprivileged: a real
// Worker as root does so, and the function still cannot read a 0600 key beside it. Needs root (CI runs as
// root); elsewhere it is skipped.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BlockxClient } from '../../src/client/client.js';
import { packagePath } from '../../src/kernel/package-root.js';
import { resolveExecutorUser } from '../../src/services/call-host/adapters/executor-user.js';
import { startCluster, type TestCluster } from '../support/cluster.js';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const GROUP = 64124;
const USER = `65534:${GROUP}`;

const home = mkdtempSync(path.join(tmpdir(), 'blockx-root-layout-')); // 0700, owner root: like /root
const project = path.join(home, 'project');
const functionsDir = path.join(project, 'functions');
mkdirSync(functionsDir, { recursive: true, mode: 0o700 });
chmodSync(project, 0o700);
const keyFile = path.join(project, 'node-key.pem');
writeFileSync(keyFile, 'not for functions\n', { mode: 0o600 });
writeFileSync(
  path.join(functionsDir, 'whoami.ts'),
  `import { readFileSync } from 'node:fs';
export default async (_ctx: unknown, key: string) => {
  let read = 'ok';
  try {
    readFileSync(key);
  } catch (err) {
    read = (err as NodeJS.ErrnoException).code ?? String(err);
  }
  return { uid: process.getuid?.(), gid: process.getgid?.(), key: read };
};
`,
  { mode: 0o600 },
);
const checkout = [packagePath('bin', 'blockx.js'), packagePath('node_modules')];
const needs = [...checkout, functionsDir];
// The Executors run this checkout's bin and node_modules: a checkout the user cannot reach itself (a
// clone in a 0700 folder, such as a fresh clone under mktemp -d or /root) leaves nothing to test here.
const checkoutReachable = resolveExecutorUser(USER, checkout).kind !== 'error';

describe.skipIf(!isRoot || !checkoutReachable)(
  'a project in a folder only root may enter (the /root layout)',
  () => {
    let cluster: TestCluster | undefined;
    let client: BlockxClient | undefined;

    afterAll(async () => {
      client?.close();
      await cluster?.stop();
      rmSync(home, { recursive: true, force: true });
    });

    it('is out of reach as it is; with the group layout the Executors run as 65534:GROUP and still cannot read a 0600 key', async () => {
      // As it is: the named user is refused (auto would fall back to root with the warning).
      expect(resolveExecutorUser(USER, needs)).toMatchObject({
        kind: 'error',
        message: expect.stringMatching(new RegExp(`cannot enter ${home}`)),
      });
      // chgrp GROUP home && chmod 0710 home; chgrp -R GROUP project && chmod -R g+rX project (the key stays 0600).
      chownSync(home, 0, GROUP);
      chmodSync(home, 0o710);
      for (const [p, mode] of [
        [project, 0o750],
        [functionsDir, 0o750],
        [path.join(functionsDir, 'whoami.ts'), 0o640],
      ] as const) {
        chownSync(p, 0, GROUP);
        chmodSync(p, mode);
      }
      const decision = resolveExecutorUser(USER, needs);
      if (decision.kind === 'error' && !decision.message.includes(home)) {
        // This checkout itself is out of the group's reach: nothing to run here.
        return;
      }
      expect(decision.kind).toBe('drop');
      cluster = await startCluster({
        workers: 1,
        functionsDir,
        configPatch: (doc) => {
          const deployments = doc['deployments'] as Record<string, { executor?: Record<string, unknown> }>;
          for (const d of Object.values(deployments)) d.executor = { ...d.executor, user: USER };
        },
      });
      client = new BlockxClient({ coordinator: cluster.coordinatorAddr });
      const r = await client.run({
        functionCallConfig: {
          type: 'CallListCallConfig',
          config: { function: 'whoami', callList: [[keyFile]] },
        },
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
      });
      expect(r.state, r.failureMessage).toBe('SUCCEEDED');
      expect((r.pluginResults[0]?.result as unknown[])[0]).toEqual({ uid: 65534, gid: GROUP, key: 'EACCES' });
    }, 180_000);
  },
);
