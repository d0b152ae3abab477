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
