import type { Command } from 'commander';
import { buildServer } from '../api/server.ts';
import { openApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { port } from './parsers.ts';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the HTTP API (and, unless --no-worker, the job worker)')
    .option('--port <port>', 'port to listen on', port, 8080)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--no-worker', 'do not run jobs in this process (scale-out API nodes)')
    .action(async (options: { port: number; host: string; worker: boolean }) => {
      const config = loadConfig();
      const app = await openApp(config);
      const server = buildServer(app);
      const shutdown = async (signal: string) => {
        app.logger.info({ signal }, 'shutting down');
        await server.close();
        await app.close();
        process.exit(0);
      };
      process.once('SIGTERM', () => void shutdown('SIGTERM'));
      process.once('SIGINT', () => void shutdown('SIGINT'));
      const address = await server.listen({ port: options.port, host: options.host });
      app.logger.info(
        { address, database: app.store.location, worker: options.worker },
        `docwright listening on ${address}`,
      );
    });
}
