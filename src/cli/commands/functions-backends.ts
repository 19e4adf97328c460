// Where `blockx functions` reads and writes deployed versions (docs/functions-deploy.md):
//
//   etcd         `--etcd`, or the config's registry.etcd.endpoints (ETCD_ENDPOINTS): the store in etcd,
//                the Workers' heartbeats read from their registry prefixes
//   coordinator  otherwise (`blockx up` with its in-process registry): CoordinatorAdminService's functions
//                RPCs on `--coordinator` / COORDINATOR_LISTEN / the config's coordinator, and the Workers'
//                versions from its cluster status
//
// Both answer with the store's own shapes and error codes, so the command prints the same either way.
import type * as grpc from '@grpc/grpc-js';
import type { FunctionsChange__Output } from '../../generated/proto/blockx/coordinator/v1/FunctionsChange.js';
import type { ListFunctionsResponse__Output } from '../../generated/proto/blockx/coordinator/v1/ListFunctionsResponse.js';
import type { BlockxConfig } from '../../kernel/config-types.js';
import { loadTlsMaterial } from '../../kernel/tls-files.js';
import type { BundleFile } from '../../services/functions-store/bundle.js';
import type { DeployOutcome, UseOutcome } from '../../services/functions-store/functions-store.js';
import type { VersionEntry, VersionIndex } from '../../services/functions-store/version-index.js';
import type { WorkerCodeVersion } from '../../services/functions-store/worker-versions.js';

export interface FunctionsBackend {
  /** What it talks to, for messages: `etcd at …` or `the coordinator at …`. */
  readonly where: string;
  deploy(files: readonly BundleFile[]): Promise<DeployOutcome>;
  use(prefix: string): Promise<UseOutcome>;
  list(): Promise<{ index: VersionIndex; workers: WorkerCodeVersion[] }>;
  /** The current version's entry; undefined before the first deploy. */
  current(): Promise<VersionEntry | undefined>;
  close(): void;
}

/** A failure of the store (its code: exit 1), as opposed to a backend that does not answer (exit 2). */
export class StoreRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function etcdBackend(
  config: BlockxConfig,
  endpoints: readonly string[],
): Promise<FunctionsBackend> {
  const [
    { createEtcdClient, etcdSecurityOf },
    { EtcdFunctionsKv },
    { FunctionsStore },
    { readWorkerCodeVersions },
  ] = await Promise.all([
    import('../../services/registry/etcd-client.js'),
    import('../../services/functions-store/etcd-kv.js'),
    import('../../services/functions-store/functions-store.js'),
    import('../../services/functions-store/worker-versions.js'),
  ]);
  const client = createEtcdClient({
    endpoints,
    unaryDeadlineMs: config.registry.etcd.dialTimeoutMs,
    security: etcdSecurityOf(config.registry.etcd),
  });
  const store = new FunctionsStore(new EtcdFunctionsKv(client));
  const prefixes = Object.values(config.deployments).map((d) => d.worker.registryPrefix);
  return {
    where: `etcd at ${endpoints.join(', ')}`,
    deploy: (files) => store.deploy(files, signWith(config)),
    use: (prefix) => store.use(prefix),
    list: async () => ({
      index: await store.list(),
      workers: await readWorkerCodeVersions(client, prefixes),
    }),
    current: async () => currentEntry(await store.list()),
    close: () => client.close(),
  };
}

export async function coordinatorBackend(
  config: BlockxConfig,
  address: string,
  timeoutMs: number,
): Promise<FunctionsBackend> {
  const [
    { Metadata },
    { ChannelPool },
    { CLIENT_CHANNEL_OPTIONS },
    { BLOCKX_ERROR_CODE_KEY },
    { encodeBundle },
    { BlockxClient },
    { clientTlsOf },
  ] = await Promise.all([
    import('@grpc/grpc-js'),
    import('../../client/channel-pool.js'),
    import('../../grpc/channel-options.js'),
    import('../../grpc/status.js'),
    import('../../services/functions-store/bundle.js'),
    import('../../client/client.js'),
    import('./status.js'),
  ]);
  const tls = clientTlsOf(config);
  const pool = new ChannelPool({ ...CLIENT_CHANNEL_OPTIONS }, tls.tls);
  const admin = pool.admin(address);
  const statusClient = new BlockxClient({ coordinator: address, rpcTimeoutMs: timeoutMs, ...tls });
  /** One unary call; a refusal of the store (its code in the metadata) becomes a StoreRefusal. */
  const call = <Res>(
    invoke: (
      md: grpc.Metadata,
      o: grpc.CallOptions,
      cb: (err: grpc.ServiceError | null, res?: Res) => void,
    ) => unknown,
  ): Promise<Res> =>
    new Promise((resolve, reject) => {
      invoke(new Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
        if (err === null && res !== undefined) {
          resolve(res);
          return;
        }
        const code = err?.metadata?.get(BLOCKX_ERROR_CODE_KEY)[0];
        reject(typeof code === 'string' && code !== '' ? new StoreRefusal(code, err?.details ?? '') : err);
      });
    });
  const entryOf = (
    v: {
      version: string;
      digest: string;
      fileNames: string[];
      sourceBytes: number;
      storedBytes: number;
      deployedAtMs: number;
    } | null,
  ): VersionEntry => {
    if (v === null) throw new Error('the coordinator answered without a version');
    return { ...v, fileNames: [...v.fileNames] };
  };
  return {
    where: `the coordinator at ${address}`,
    async deploy(files) {
      const bundle = encodeBundle(files, Date.now(), signWith(config));
      const req = { bundle: bundle.stored, version: bundle.version };
      const res = await call<FunctionsChange__Output>((md, o, cb) => admin.deployFunctions(req, md, o, cb));
      return { ...res, entry: entryOf(res.entry) };
    },
    async use(prefix) {
      const res = await call<FunctionsChange__Output>((md, o, cb) =>
        admin.useFunctions({ version: prefix }, md, o, cb),
      );
      return { entry: entryOf(res.entry), changed: res.changed, previous: res.previous };
    },
    async current() {
      const res = await call<ListFunctionsResponse__Output>((md, o, cb) =>
        admin.listFunctions({}, md, o, cb),
      );
      return currentEntry({ current: res.current, changedAtMs: 0, versions: res.versions.map(entryOf) });
    },
    async list() {
      const res = await call<ListFunctionsResponse__Output>((md, o, cb) =>
        admin.listFunctions({}, md, o, cb),
      );
      const view = await statusClient.clusterStatus();
      return {
        index: { current: res.current, changedAtMs: 0, versions: res.versions.map(entryOf) },
        workers: view.workers.map((w) => ({
          workerAddr: w.workerAddr,
          registryPrefix: w.registryPrefix,
          codeVersion: w.codeVersion ?? '',
          codeVersionError: w.codeVersionError ?? '',
          lastHeartbeatMs: w.lastHeartbeatMs,
        })),
      };
    },
    close: () => {
      statusClient.close();
      pool.close();
    },
  };
}

function currentEntry(index: VersionIndex): VersionEntry | undefined {
  return index.versions.find((v) => v.version === index.current);
}

/**
 * A deploy is signed with this process's TLS certificate and key when `tls` is configured, so Workers of a
 * cluster with a CA can check who deployed it (docs/functions-deploy.md § Signed deploys); unsigned otherwise.
 */
function signWith(config: BlockxConfig): { signer?: { cert: string; key: string } } {
  const tls = loadTlsMaterial(config.tls);
  return tls === undefined
    ? {}
    : { signer: { cert: tls.cert.toString('utf8'), key: tls.key.toString('utf8') } };
}
