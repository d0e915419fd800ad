import { Worker } from 'node:worker_threads';

/**
 * Calls the function `name` exported by `module` with `args` on a thread of its own and resolves
 * with what it returns (a structured-clone value); rejects when it runs longer than `limitMs`,
 * stopping the thread. For code that may never yield — a catastrophic regular expression or glob
 * after a regression: on the test's own thread no timeout could fire, and the test file would
 * hang instead of failing. The limit is a hang stop, not a speed test: keep it far above the
 * expected time.
 */
export async function offThread<T>(module: URL, name: string, args: unknown[], limitMs = 60_000): Promise<T> {
  const worker = new Worker(
    `
    const { parentPort, workerData: { module, name, args } } = require('node:worker_threads');
    import(module)
      .then((m) => m[name](...args))
      .then((value) => parentPort.postMessage({ value }), (error) => parentPort.postMessage({ error }));
    `,
    { eval: true, workerData: { module: module.href, name, args } },
  );
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<T>((resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `${name}(…) did not finish within ${limitMs / 1000} s and was stopped: does a pattern backtrack catastrophically?`,
            ),
          ),
        limitMs,
      );
      worker.once('message', (message: { value?: T; error?: unknown }) =>
        'error' in message ? reject(message.error) : resolve(message.value as T),
      );
      worker.once('error', reject);
    });
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
}
