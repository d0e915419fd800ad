/**
 * Worker ids that say where their process runs, so that a worker can tell that another one is
 * gone for certain: `<host>-<pid>-<random>@<machine>`, where `<machine>` names this boot of this
 * machine's kernel and its process id namespace (two containers on one host are two machines).
 * A run whose lease names a process of this machine that no longer runs can be recovered at once
 * instead of when its lease expires (a `kill -9` and a restart). Where the machine cannot be
 * named (no /proc), ids carry no `@<machine>` and are never judged gone: leases expire as before.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

function machineName(): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pids = readlinkSync('/proc/self/ns/pid');
    return createHash('sha256').update(`${boot}\n${pids}`).digest('hex').slice(0, 12);
  } catch {
    return undefined;
  }
}

const MACHINE = machineName();
const ID = /-(\d+)-[0-9a-f]{6}@([0-9a-f]{12})$/;
/** The ids this process gave out: another id with this process's pid is a dead process's. */
const own = new Set<string>();

/** A new worker id for this process. */
export function newWorkerId(): string {
  const id = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}${MACHINE ? `@${MACHINE}` : ''}`;
  own.add(id);
  return id;
}

/** Whether a process with this id runs on this machine (a process of another user counts). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The process id of the worker `workerId` names, when it is certainly gone: it ran on this
 * machine and its process no longer runs. Undefined when it runs, runs elsewhere, or cannot be
 * told (a reused process id counts as running: its lease then expires as usual).
 */
export function goneWorkerProcess(workerId: string): number | undefined {
  const match = ID.exec(workerId);
  if (!match || MACHINE === undefined || match[2] !== MACHINE) return undefined;
  const pid = Number(match[1]);
  if (pid === process.pid) return own.has(workerId) ? undefined : pid;
  return isRunning(pid) ? undefined : pid;
}
