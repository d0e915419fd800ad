// A run whose repository's name resolves to a cloud metadata address by the time the run starts
// (it resolved to a private one when the project was saved) fails with repository-address-refused
// before git or the model is asked anything (docs/security.mdx, "Repository addresses"): a stable
// code, never internal-error. Names resolve through node:dns's lookup, answered here for this test's
// own name.
import assert from 'node:assert/strict';
import dns from 'node:dns/promises';
import { after, before, test } from 'node:test';
import { createPipeline } from '../../src/pipeline/pipeline.ts';
import { Worker } from '../../src/worker/worker.ts';
import { type ScriptedServer, startOpenAIServer } from '../doubles/openai-server.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { waitFor } from '../helpers/worker.ts';

const realLookup = dns.lookup;
let answer = '10.9.8.7';
let t: TestApp;
let model: ScriptedServer;
let worker: Worker;

before(async () => {
  // biome-ignore lint/suspicious/noExplicitAny: the lookup's overloads are answered as `all: true`
  (dns as any).lookup = async (name: string, options: unknown) =>
    name === 'git.rebinding.test' ? [{ address: answer, family: 4 }] : realLookup(name, options as never);
  model = await startOpenAIServer();
  t = await startTestApp({ env: { DOCWRIGHT_MODEL: 'openai-compatible/scripted' } });
  worker = new Worker(t.app, { runner: createPipeline(t.app), pollMs: 50 });
});
after(async () => {
  dns.lookup = realLookup;
  await worker.stop(0);
  await t.close();
  await model.close();
});

test('the repository now resolves to 169.254.169.254: the run fails with repository-address-refused, nothing contacted', async () => {
  const project = await t.app.projects.create({
    name: 'Rebinding',
    repository: 'https://git.rebinding.test/acme/docs',
    host: 'gitea',
    ref: 'main',
    token: 'gitea-token-0123456789abcdef',
    openaiCompatibleBaseUrl: model.url,
  });
  answer = '169.254.169.254';
  const { id } = (await t.app.jobs.create(project.id, { prompt: 'Document the export command' })).job;
  worker.start();
  const done = await waitFor(
    async () => {
      const job = await t.app.jobs.get(project.id, id);
      return job.status === 'active' ? undefined : job;
    },
    { timeoutMs: 30_000 },
  );
  assert.equal(done.status, 'failed');
  assert.equal(done.error?.code, 'repository-address-refused');
  assert.match(done.error?.message ?? '', /git\.rebinding\.test resolves to 169\.254\.169\.254/);
  assert.ok(!(done.error?.message ?? '').includes('gitea-token'));
  assert.equal(model.requests.length, 0, 'the model was not asked');
});
