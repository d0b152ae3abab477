// CPU time of processes from /proc (user + system), to report CPU per event beside throughput on a shared machine.
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** CPU seconds a process has used so far, or NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at ") "; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** CPU seconds the whole machine has spent so far, busy (every state but idle and iowait) and idle, over all cores. */
export function machineCpuSeconds(): { busy: number; idle: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest time is already in user)
    const f = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const idle = f[3] + f[4];
    const busy = f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
    return { busy: busy / TICKS_PER_SECOND, idle: idle / TICKS_PER_SECOND };
  } catch {
    return { busy: NaN, idle: NaN };
  }
}
