// What bench/coordinator-capacity.ts reads from outside the processes it measures: the CPU time of a
// process (Linux /proc) and etcd's own counters (its /metrics endpoint).
import { readFileSync, readdirSync } from 'node:fs';
import { get as httpGet } from 'node:http';

/** One clock tick of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICK_MS = 10;

/**
 * CPU time of every thread of `pid`, ms. The sum of `se.sum_exec_runtime` over /proc/<pid>/task/<tid>/sched
 * (nanosecond precision) when the kernel exposes it; else utime + stime of /proc/<pid>/stat, in 10 ms
 * ticks. The precise figure misses threads that exited between two reads: Node's and etcd's threads live
 * as long as the process, so over a window that is nothing.
 */
export function processCpuMs(pid: number): number {
  try {
    let sum = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const m = /se\.sum_exec_runtime\s*:\s*([\d.]+)/.exec(
        readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'),
      );
      if (m === null) throw new Error('no sum_exec_runtime');
      sum += Number(m[1]);
    }
    return sum;
  } catch {
    // The fields after the command name (which may hold spaces) start at state; utime, stime are 14, 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  }
}

/** Which source processCpuMs uses on this machine, for the bench's header. */
export function cpuSource(): string {
  try {
    readFileSync(`/proc/${process.pid}/task/${process.pid}/sched`, 'utf8');
    return '/proc/<pid>/task/*/sched (ns)';
  } catch {
    return '/proc/<pid>/stat (10 ms ticks)';
  }
}

/** The etcd counters the capacity model uses, as totals since etcd started. */
export interface EtcdCounters {
  /** gRPC bytes received from and sent to every client (puts, keepalives, watch responses). */
  readonly receivedBytes: number;
  readonly sentBytes: number;
  readonly puts: number;
  readonly keepalives: number;
  /** Events etcd sent to watchers (here: the Coordinator's registry watch). */
  readonly watchEvents: number;
}

function counter(text: string, name: string, labels = ''): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    if (labels !== '' && !rest.includes(labels)) continue;
    sum += Number(rest.slice(rest.lastIndexOf(' ') + 1));
  }
  return sum;
}

export function readEtcdCounters(endpoint: string): Promise<EtcdCounters> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${endpoint}/metrics`, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        resolve({
          receivedBytes: counter(text, 'etcd_network_client_grpc_received_bytes_total'),
          sentBytes: counter(text, 'etcd_network_client_grpc_sent_bytes_total'),
          puts: counter(text, 'grpc_server_msg_received_total', 'grpc_method="Put"'),
          keepalives: counter(text, 'grpc_server_msg_received_total', 'grpc_method="LeaseKeepAlive"'),
          watchEvents: counter(text, 'etcd_debugging_mvcc_events_total'),
        }),
      );
      res.on('error', reject);
    });
    req.setTimeout(5_000, () => req.destroy(new Error('etcd /metrics timed out')));
    req.on('error', reject);
  });
}

export function etcdDelta(a: EtcdCounters, b: EtcdCounters): EtcdCounters {
  return {
    receivedBytes: b.receivedBytes - a.receivedBytes,
    sentBytes: b.sentBytes - a.sentBytes,
    puts: b.puts - a.puts,
    keepalives: b.keepalives - a.keepalives,
    watchEvents: b.watchEvents - a.watchEvents,
  };
}
