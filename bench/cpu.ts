/**
 * CPU accounting from /proc (Linux only; everything degrades to "unknown" elsewhere): how many
 * CPU-seconds the service, the backing services, this bench process and the rest of the machine
 * used during a phase. "Other" is machine busy time not spent by the stack or the bench: other
 * work on the machine that competes for the same cores and skews the figures.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import { info, metric } from './stats.js';

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // keep the Linux default
}

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuSeconds: number;
}

function readProcStat(pid: number | string): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const open = text.indexOf('(');
    const close = text.lastIndexOf(')');
    const fields = text.slice(close + 2).split(' ');
    // After "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return { pid: Number(pid), ppid: Number(fields[1]), comm: text.slice(open + 1, close), cpuSeconds: (utime + stime) / ticksPerSecond };
  } catch {
    return null;
  }
}

/** CPU-seconds (user + system) a process has used so far, or null when /proc cannot tell. */
export function processCpuSeconds(pid: number): number | null {
  return readProcStat(pid)?.cpuSeconds ?? null;
}

/** Machine-wide busy and total CPU-seconds (summed over all cores) since boot. */
function readMachine(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const [, ...values] = line.trim().split(/\s+/);
    const n = values.map(Number);
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = n;
    const busy = user + nice + system + irq + softirq;
    return { busy: busy / ticksPerSecond, total: (busy + idle + iowait + steal) / ticksPerSecond };
  } catch {
    return null;
  }
}

/** Direct children of this process, by command name: the service (node), java (MongoDB stand-in), temporal. */
function childGroups(servicePid: number): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  const add = (group: string, pid: number) => groups.set(group, [...(groups.get(group) ?? []), pid]);
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return groups;
  }
  for (const entry of entries) {
    const stat = readProcStat(entry);
    if (!stat || stat.ppid !== process.pid) continue;
    if (stat.pid === servicePid) add('service', stat.pid);
    else if (stat.comm.startsWith('java')) add('mongo', stat.pid);
    else if (stat.comm.startsWith('temporal')) add('temporal', stat.pid);
  }
  return groups;
}

export interface CpuUsage {
  wallSeconds: number;
  /** CPU-seconds per group: service, mongo, temporal, bench, other. */
  seconds: Record<string, number>;
  /** Machine busy share of all cores over the phase, 0..100. */
  machineBusyPct: number;
}

export class CpuMeter {
  private readonly groups: Map<string, number[]>;
  private readonly start: Map<number, number>;
  private readonly machineStart: { busy: number; total: number } | null;
  private readonly benchStart: NodeJS.CpuUsage;
  private readonly wallStart: number;

  constructor(servicePid: number) {
    this.groups = childGroups(servicePid);
    this.start = new Map();
    for (const pids of this.groups.values()) for (const pid of pids) this.start.set(pid, readProcStat(pid)?.cpuSeconds ?? 0);
    this.machineStart = readMachine();
    this.benchStart = process.cpuUsage();
    this.wallStart = performance.now();
  }

  stop(): CpuUsage | null {
    const machine = readMachine();
    if (!machine || !this.machineStart) return null;
    const seconds: Record<string, number> = {};
    let ours = 0;
    for (const [group, pids] of this.groups) {
      let used = 0;
      for (const pid of pids) {
        const now = readProcStat(pid)?.cpuSeconds;
        if (now !== undefined) used += now - (this.start.get(pid) ?? 0);
      }
      seconds[group] = used;
      ours += used;
    }
    const bench = process.cpuUsage(this.benchStart);
    seconds.bench = (bench.user + bench.system) / 1e6;
    ours += seconds.bench;
    const busy = machine.busy - this.machineStart.busy;
    seconds.other = Math.max(0, busy - ours);
    const total = machine.total - this.machineStart.total;
    return {
      wallSeconds: (performance.now() - this.wallStart) / 1000,
      seconds,
      machineBusyPct: total > 0 ? (100 * busy) / total : Number.NaN,
    };
  }
}

/** A process's resident set and its peak, in MB, from /proc; null when it cannot be read. */
export function readRssMb(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    const peak = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1];
    if (!rss) return null;
    return { rss: Number(rss) / 1024, peak: peak ? Number(peak) / 1024 : Number.NaN };
  } catch {
    return null;
  }
}

/** Prints a phase's CPU use: metrics with the given prefix, or only a stderr line. */
export function reportCpu(phase: string, usage: CpuUsage | null, asMetrics: boolean): void {
  if (!usage) return;
  const parts = Object.entries(usage.seconds).map(([group, value]) => `${group} ${value.toFixed(1)}`);
  info(
    `   CPU-seconds during ${phase} (${usage.wallSeconds.toFixed(1)} s wall, ${os.cpus().length} cores, machine ${usage.machineBusyPct.toFixed(0)} % busy): ${parts.join(', ')}`,
  );
  if (usage.seconds.other !== undefined && usage.seconds.other > 0.15 * usage.wallSeconds) {
    info(
      `   WARNING: ${usage.seconds.other.toFixed(1)} CPU-seconds went to other work on this machine during ${phase}: figures are skewed by it`,
    );
  }
  if (!asMetrics) return;
  for (const [group, value] of Object.entries(usage.seconds)) metric(`${phase}_cpu_${group}_seconds`, value, 's');
  metric(`${phase}_cpu_machine_busy`, usage.machineBusyPct, '%');
}
