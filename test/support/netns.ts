// Test hosts on one machine, for partition tests (docs/placement.md § Partitions): each host is a Linux
// network namespace with one veth link to a router namespace, and the router forwards between them. A
// link between two hosts is cut by a `blackhole` policy rule in the router for each direction, so packets
// are dropped silently, as by a real partition (no reset, no ICMP): a TCP peer only notices through its own
// timeouts. Healing deletes the rules and the held connections carry on. No iptables or nftables is
// needed, only iproute2's `ip` and util-linux's `nsenter`, as root with CAP_NET_ADMIN.
//
//   const support = netnsSupport(); // { ok: true } or { ok: false, reason } (describe.skipIf)
//   const net = startTestNetwork();
//   const w0 = net.addHost('w0'); // w0.ip, w0.command('node', [...]) runs a program inside it
//   net.root; // the test process itself, on a link of its own (it reaches every host)
//   net.cut(w0, etcdHost); net.isolate(w0); net.heal(w0, etcdHost); net.healAll();
//   net.destroy(); // in afterAll: deletes every namespace and link
//
// Addresses: 10.<S>.<i>.0/24 per host link (the router .1, the host .2), S picked per network among
// those no route of the machine uses. Hosts route only 10.<S>.0.0/16 and the router has no other route,
// so nothing a test host sends leaves the machine. The test process gets the same /16 route; after
// destroy() it is replaced by an `unreachable` route, so a client still dialling a test host fails at once
// instead of sending to the machine's default route. The next network started removes such routes, and
// the namespaces of a test process that died without destroy() (their names carry its pid).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export interface NetHost {
  /** Short name (`w0`, `etcd`, ... or `test` for the test process). */
  readonly name: string;
  /** The host's address on its link. */
  readonly ip: string;
  /** `cmd args` run inside the host's namespace (as `uid`/`gid` when given: nsenter drops to them). */
  command(
    cmd: string,
    args: readonly string[],
    as?: { readonly uid: number; readonly gid: number },
  ): { cmd: string; args: string[] };
}

export interface TestNetwork {
  /** The test process's own host (no namespace: commands run as they are). */
  readonly root: NetHost;
  /** A new host on its own link. */
  addHost(name: string): NetHost;
  /** Drops every packet between `a` and `b`, both ways. Idempotent. */
  cut(a: NetHost, b: NetHost): void;
  /** Undoes cut(a, b). Idempotent. */
  heal(a: NetHost, b: NetHost): void;
  /** Drops every packet to and from `a`. */
  isolate(a: NetHost): void;
  /** Undoes every cut and isolation. */
  healAll(): void;
  /** Deletes the namespaces and links. Idempotent. */
  destroy(): void;
}

export type NetnsSupport = { readonly ok: true } | { readonly ok: false; readonly reason: string };

const NSENTER = 'nsenter';

function ip(args: readonly string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

function tryIp(args: readonly string[]): void {
  try {
    ip(args);
  } catch {
    // already gone / already there
  }
}

function errorText(err: unknown): string {
  const e = err as { stderr?: string | Buffer; message?: string };
  const stderr = e.stderr === undefined ? '' : String(e.stderr).trim();
  return stderr !== '' ? stderr : (e.message ?? String(err));
}

/**
 * Whether this process can build test hosts: root, iproute2 and nsenter present, and a namespace with a
 * veth link can be made (a container without CAP_NET_ADMIN cannot). The probe leaves nothing behind.
 */
export function netnsSupport(): NetnsSupport {
  if (process.platform !== 'linux')
    return { ok: false, reason: `network namespaces need Linux, not ${process.platform}` };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'network namespaces need root (CAP_NET_ADMIN)' };
  for (const bin of ['ip', NSENTER]) {
    try {
      execFileSync(bin, ['-V'], { stdio: 'ignore' });
    } catch {
      return {
        ok: false,
        reason: `'${bin}' not found: install Debian's ${bin === 'ip' ? 'iproute2' : 'util-linux'}`,
      };
    }
  }
  const ns = `bxprobe${process.pid}`;
  try {
    ip(['netns', 'add', ns]);
    ip(['-n', ns, 'link', 'add', 'p0', 'type', 'veth', 'peer', 'name', 'p1']);
    ip(['-n', ns, 'link', 'set', 'p0', 'up']);
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: `cannot make a network namespace with a veth link: ${errorText(err)}` };
  } finally {
    tryIp(['netns', 'del', ns]);
  }
}

/** A free /16 of 10.0.0.0/8 for this network: one that no route of the machine mentions. */
function pickSubnet(): number {
  const routes = ip(['route', 'show', 'table', 'all']);
  for (let tries = 0; tries < 50; tries++) {
    const s = 200 + (randomBytes(1)[0]! % 50);
    if (!routes.includes(`10.${s}.`)) return s;
  }
  throw new Error('no free 10.<S>.0.0/16 for the test network (10.200-249 all routed)');
}

const OWN_NAMESPACE = /^bx[0-9a-f]{6}-p(\d+)-/;
const OWN_GUARD = /^unreachable (10\.2[0-4]\d\.0\.0\/16)\b/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes what earlier networks left: namespaces of dead test processes, and guard routes (the header). */
function removeLeftovers(): void {
  for (const line of ip(['netns', 'list']).split('\n')) {
    const ns = line.split(' ')[0] ?? '';
    const pid = OWN_NAMESPACE.exec(ns)?.[1];
    if (pid !== undefined && !alive(Number(pid))) tryIp(['netns', 'del', ns]);
  }
  for (const line of ip(['route', 'show']).split('\n')) {
    const guard = OWN_GUARD.exec(line)?.[1];
    if (guard !== undefined) tryIp(['route', 'del', 'unreachable', guard]);
  }
}

export function startTestNetwork(): TestNetwork {
  removeLeftovers();
  const id = `bx${randomBytes(3).toString('hex')}`;
  const subnetOctet = pickSubnet();
  const subnet = `10.${subnetOctet}.0.0/16`;
  const prefix = `${id}-p${process.pid}`;
  const router = `${prefix}-r`;
  const namespaces: string[] = [];
  const rules = new Set<string>();
  let links = 0;
  let destroyed = false;

  const makeNamespace = (ns: string): void => {
    ip(['netns', 'add', ns]);
    namespaces.push(ns);
    ip(['-n', ns, 'link', 'set', 'lo', 'up']);
  };
  const inRouter = (args: readonly string[]): void => void ip(['-n', router, ...args]);
  /** A veth from the router to `ns` (undefined: the test process's own namespace); returns the host ip. */
  const link = (ns: string | undefined): string => {
    const i = ++links;
    const hostIp = `10.${subnetOctet}.${i}.2`;
    const routerIp = `10.${subnetOctet}.${i}.1`;
    const outside = ns === undefined ? `${id}h` : 'eth0';
    inRouter([
      'link',
      'add',
      `h${i}`,
      'type',
      'veth',
      'peer',
      'name',
      outside,
      'netns',
      ns ?? String(process.pid),
    ]);
    inRouter(['addr', 'add', `${routerIp}/24`, 'dev', `h${i}`]);
    inRouter(['link', 'set', `h${i}`, 'up']);
    const at = ns === undefined ? [] : ['-n', ns];
    ip([...at, 'addr', 'add', `${hostIp}/24`, 'dev', outside]);
    ip([...at, 'link', 'set', outside, 'up']);
    ip([...at, 'route', 'replace', subnet, 'via', routerIp]);
    return hostIp;
  };
  const rule = (verb: 'add' | 'del', selector: string[]): void => {
    const key = selector.join(' ');
    if (verb === 'add' && rules.has(key)) return;
    if (verb === 'del' && !rules.has(key)) return;
    inRouter(['rule', verb, ...selector, 'blackhole']);
    if (verb === 'add') rules.add(key);
    else rules.delete(key);
  };

  const destroy = (): void => {
    if (destroyed) return;
    destroyed = true;
    // Deleting the router deletes every veth pair, the test process's end included, and its route.
    for (const ns of namespaces.reverse()) tryIp(['netns', 'del', ns]);
    tryIp(['route', 'replace', 'unreachable', subnet]);
  };

  try {
    makeNamespace(router);
    // /proc/sys/net answers for the namespace of whoever opens it (no sysctl binary needed).
    execFileSync(
      NSENTER,
      [`--net=/run/netns/${router}`, '--', 'sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward'],
      {
        stdio: 'ignore',
      },
    );
    const rootIp = link(undefined);
    const root: NetHost = { name: 'test', ip: rootIp, command: (cmd, args) => ({ cmd, args: [...args] }) };
    return {
      root,
      addHost: (name) => {
        const ns = `${prefix}-${name}`;
        makeNamespace(ns);
        const hostIp = link(ns);
        return {
          name,
          ip: hostIp,
          command: (cmd, args, as) => ({
            cmd: NSENTER,
            args: [
              `--net=/run/netns/${ns}`,
              ...(as === undefined ? [] : [`--setuid=${as.uid}`, `--setgid=${as.gid}`]),
              '--',
              cmd,
              ...args,
            ],
          }),
        };
      },
      cut: (a, b) => {
        rule('add', ['from', a.ip, 'to', b.ip]);
        rule('add', ['from', b.ip, 'to', a.ip]);
      },
      heal: (a, b) => {
        rule('del', ['from', a.ip, 'to', b.ip]);
        rule('del', ['from', b.ip, 'to', a.ip]);
      },
      isolate: (a) => {
        rule('add', ['from', a.ip]);
        rule('add', ['to', a.ip]);
      },
      healAll: () => {
        for (const key of [...rules]) rule('del', key.split(' '));
      },
      destroy,
    };
  } catch (err) {
    destroy();
    throw err;
  }
}
