import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { goneWorkerProcess, newWorkerId } from '../../src/worker/worker-identity.ts';

test('a worker is judged gone only when it ran on this machine and its process no longer runs', () => {
  const own = newWorkerId();
  const match = /^(.+)-(\d+)-([0-9a-f]{6})@([0-9a-f]{12})$/.exec(own);
  assert.ok(match, own);
  const [, host, pid, , machine] = match;
  assert.equal(Number(pid), process.pid);
  const id = (p: number, m = machine) => `${host}-${p}-abcdef@${m}`;
  // A process that ran on this machine and has exited.
  const exited = spawnSync(process.execPath, ['-e', '0']).pid;

  assert.equal(goneWorkerProcess(own), undefined, 'this process’s own worker');
  assert.equal(goneWorkerProcess(id(process.ppid)), undefined, 'a process that runs');
  assert.equal(goneWorkerProcess(id(exited)), exited, 'a process that ran here and is gone');
  assert.equal(goneWorkerProcess(id(process.pid)), process.pid, 'an earlier process with this one’s id');
  assert.equal(goneWorkerProcess(id(exited, '0123456789ab')), undefined, 'another machine');
  assert.equal(goneWorkerProcess(`${host}-${exited}-abcdef`), undefined, 'an id that names no machine');
  assert.equal(goneWorkerProcess('thief'), undefined);
});
