import type { Command } from 'commander';
import { type App, openApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { announceFirstRun } from '../dashboard/first-run.ts';
import { isDatabaseUnavailable } from '../database-errors.ts';
import { DocwrightError } from '../errors.ts';
import { recordServer } from '../processes/process-registry.ts';
import { buildServer } from '../server.ts';
import { backgroundLoops } from '../worker/background.ts';
import { port, positiveInt } from './parsers.ts';

/**
 * The last line of defence of a long-running process: a promise nobody handled, or an
 * exception nothing caught, is logged and the process keeps serving (every request, run and
 * delivery recovers on its own: runs by their leases, requests by the client's retry).
 */
function installSafetyNet(app: App): void {
  process.on('unhandledRejection', (reason) => {
    app.logger.error({ err: reason }, 'unhandled promise rejection; the process keeps serving');
  });
  process.on('uncaughtException', (error, origin) => {
    app.logger.error({ err: error, origin }, 'uncaught exception; the process keeps serving');
  });
}

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

/**
 * What the operator should know as the process starts: the configuration's notices (a data
 * directory left by an earlier version) and a database that cannot be written (the process keeps
 * running, not ready, so that it can still be inspected).
 */
async function reportAtStart(app: App): Promise<void> {
  for (const notice of app.config.notices) app.logger.warn({ dataDir: app.config.dataDir }, notice);
  await app.store
    .checkWritable()
    .catch((error: Error) =>
      app.logger.error({ database: app.store.location }, `not ready: ${error.message}`),
    );
}

/** `listen` failures a user can fix, with the fix. */
function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    return new DocwrightError(
      'invalid-request',
      `port ${port} on ${host} is already in use (another docwright serve?): stop that process, or use --port <n>`,
      { cause: error },
    );
  }
  if (code === 'EACCES') {
    return new DocwrightError(
      'invalid-request',
      `not allowed to listen on port ${port} of ${host}: use --port with a number above 1023`,
      { cause: error },
    );
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new DocwrightError(
      'invalid-request',
      `cannot listen on ${host}: no such address on this machine; use --host 127.0.0.1 or 0.0.0.0`,
      { cause: error },
    );
  }
  return error;
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
      const background = backgroundLoops(app, { runsJobs: options.worker, servesApi: true });
      installSafetyNet(app);
      const address = await server.listen({ port: options.port, host: options.host }).catch(async (error) => {
        await app.close();
        throw listenError(error, options.host, options.port);
      });
      // Before the process says it listens: a command run from then on sees its settings.
      const record = recordServer(app, { servesApi: true, runsJobs: options.worker });
      onShutdown(app, async () => {
        await Promise.all([server.close(), background.stop()]);
        await record.stop();
      });
      await record.started;
      await reportAtStart(app);
      background.start();
      app.logger.info(
        { address, database: app.store.location, worker: options.worker },
        `docwright listening on ${address}`,
      );
      // A database that cannot be written keeps the server up but not ready: no link to store then.
      await announceFirstRun(app, address).catch((error: unknown) => {
        if (!isDatabaseUnavailable(error)) throw error;
        app.logger.warn('no first-run sign-in link: the database cannot be written');
      });
    });

  program
    .command('worker')
    .description('run only the job worker (scale-out worker nodes)')
    .option('--concurrency <n>', 'runs at once in this process (DOCWRIGHT_WORKER_CONCURRENCY)', positiveInt)
    .action(async (options: { concurrency?: number }) => {
      const app = await openApp(loadConfig());
      const background = backgroundLoops(app, {
        runsJobs: true,
        servesApi: false,
        concurrency: options.concurrency,
      });
      installSafetyNet(app);
      const record = recordServer(app, { servesApi: false, runsJobs: true });
      onShutdown(app, async () => {
        await background.stop();
        await record.stop();
      });
      await record.started;
      await reportAtStart(app);
      background.start();
      app.logger.info(
        { database: app.store.location, workerId: background.worker.id },
        'docwright worker running',
      );
    });
}
