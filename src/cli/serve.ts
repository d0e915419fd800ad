import type { Command } from 'commander';
import { buildServer } from '../api/server.ts';
import { type App, openApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { createAgentRunner } from '../worker/agent-runner.ts';
import { Worker } from '../worker/worker.ts';
import { port, positiveInt } from './parsers.ts';

/** Stops everything on SIGTERM/SIGINT: HTTP first, then the worker's grace period. */
function onShutdown(app: App, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.logger.info({ signal }, 'shutting down');
    try {
      await stop();
      await app.close();
    } finally {
      process.exit(0);
    }
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

export function registerServeCommands(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP API and, unless --no-worker, the job worker')
    .option('--port <port>', 'port to listen on', port, 8080)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--no-worker', 'do not run jobs in this process (scale-out API nodes)')
    .action(async (options: { port: number; host: string; worker: boolean }) => {
      const app = await openApp(loadConfig());
      const server = buildServer(app);
      // API-only processes still sweep, so that no job outlives a crash of every worker.
      const worker = new Worker(app, { runner: createAgentRunner(app), claim: options.worker });
      onShutdown(app, async () => {
        await Promise.all([server.close(), worker.stop()]);
      });
      const address = await server.listen({ port: options.port, host: options.host });
      worker.start();
      app.logger.info(
        { address, database: app.store.location, worker: options.worker },
        `docwright listening on ${address}`,
      );
    });

  program
    .command('worker')
    .description('run only the job worker (scale-out worker nodes)')
    .option('--concurrency <n>', 'runs at once in this process (DOCWRIGHT_WORKER_CONCURRENCY)', positiveInt)
    .action(async (options: { concurrency?: number }) => {
      const app = await openApp(loadConfig());
      const worker = new Worker(app, { runner: createAgentRunner(app), concurrency: options.concurrency });
      onShutdown(app, () => worker.stop());
      worker.start();
      app.logger.info({ database: app.store.location, workerId: worker.id }, 'docwright worker running');
    });
}
