// Redis's own counters (INFO stats, cpu, commandstats) summed over the nodes of a broker, so a scenario reports what
// each event costs Redis: commands, bytes in and out, replication bytes and CPU.
import { Redis } from 'ioredis';

export interface RedisCounters {
  /** Bytes Redis read from / wrote to clients (replication traffic not included). */
  netIn: number;
  netOut: number;
  /** Bytes a master wrote to its replicas. */
  replOut: number;
  /** CPU seconds of the redis-server processes (user + system, main thread and the rest). */
  cpu: number;
  /** Calls per command, e.g. publish, spublish, evalsha (commands inside scripts counted under their own names). */
  calls: Record<string, number>;
  /** Microseconds Redis spent per command (a publish's includes writing it to its subscribers' buffers). */
  usec: Record<string, number>;
}

const field = (info: string, name: string) => Number(new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1] ?? 0);

export async function nodeCounters(port: number): Promise<RedisCounters> {
  const r = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
  try {
    const info = await r.info('all');
    const calls: Record<string, number> = {};
    const usec: Record<string, number> = {};
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      calls[m[1]] = Number(m[2]);
      usec[m[1]] = Number(m[3]);
    }
    return {
      netIn: field(info, 'total_net_input_bytes'),
      netOut: field(info, 'total_net_output_bytes'),
      replOut: field(info, 'total_net_repl_output_bytes'),
      cpu: field(info, 'used_cpu_sys') + field(info, 'used_cpu_user'),
      calls,
      usec,
    };
  } finally {
    r.disconnect();
  }
}

/** The counters of every node, summed. */
export async function brokerCounters(ports: number[]): Promise<RedisCounters> {
  const all = await Promise.all(ports.map(nodeCounters));
  const sum: RedisCounters = { netIn: 0, netOut: 0, replOut: 0, cpu: 0, calls: {}, usec: {} };
  for (const c of all) {
    sum.netIn += c.netIn;
    sum.netOut += c.netOut;
    sum.replOut += c.replOut;
    sum.cpu += c.cpu;
    for (const [k, v] of Object.entries(c.calls)) sum.calls[k] = (sum.calls[k] ?? 0) + v;
    for (const [k, v] of Object.entries(c.usec)) sum.usec[k] = (sum.usec[k] ?? 0) + v;
  }
  return sum;
}

export function counterDelta(before: RedisCounters, after: RedisCounters): RedisCounters {
  const calls: Record<string, number> = {};
  const usec: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.calls)) calls[k] = v - (before.calls[k] ?? 0);
  for (const [k, v] of Object.entries(after.usec)) usec[k] = v - (before.usec[k] ?? 0);
  return { netIn: after.netIn - before.netIn, netOut: after.netOut - before.netOut, replOut: after.replOut - before.replOut, cpu: after.cpu - before.cpu, calls, usec };
}
