/**
 * CPU time and memory of another process, read from /proc (Linux). Used for processes the
 * bench does not control through IPC (etcd) and as the fallback for its own children.
 * /proc counts CPU in clock ticks (10 ms at the usual 100 Hz), so measurement windows are
 * seconds long.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU time of `pid` in µs, or undefined when it cannot be read. */
export function processCpuUs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) / clockTicks()) * 1e6;
  } catch {
    return undefined;
  }
}

/**
 * What the kernel counts for `pid` (Linux): its read and write system calls and bytes
 * (`/proc/<pid>/io`: `syscr`, `syscw`, `rchar`, `wchar`) and how often it went to sleep or was
 * preempted (`/proc/<pid>/status`: `voluntary_ctxt_switches`, `nonvoluntary_ctxt_switches`).
 * Undefined when they cannot be read.
 */
export function kernelCounters(pid: number): Record<string, number> | undefined {
  try {
    const out: Record<string, number> = {};
    for (const m of readFileSync(`/proc/${pid}/io`, 'utf8').matchAll(/^(syscr|syscw|rchar|wchar): (\d+)$/gm)) out[m[1]!] = Number(m[2]);
    for (const m of readFileSync(`/proc/${pid}/status`, 'utf8').matchAll(/^(voluntary_ctxt_switches|nonvoluntary_ctxt_switches):\s+(\d+)$/gm))
      out[m[1]!] = Number(m[2]);
    return out;
  } catch {
    return undefined;
  }
}

export interface ProcessMemory {
  /** Resident set size now, bytes. */
  rss: number;
  /** Peak resident set size, bytes. */
  peakRss: number;
}

export function processMemory(pid: number): ProcessMemory | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), peakRss: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

/** The pid of a running process whose command line contains `needle` (e.g. an etcd data dir). */
export function findPid(needle: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmdline.includes(needle)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}
