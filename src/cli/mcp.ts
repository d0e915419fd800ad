/**
 * `docwright mcp` (docs/mcp.mdx): the MCP server on stdio for one project, e.g.
 *
 *   claude mcp add docwright -e DOCWRIGHT_URL=… -e DOCWRIGHT_API_KEY=… -e DOCWRIGHT_PROJECT=… -- npx docwright mcp
 *
 * stdout carries the protocol only; anything else goes to stderr.
 */
import type { Command } from 'commander';
import { createMcpServer } from '../mcp/server.ts';
import { StdioTransport } from '../mcp/stdio-transport.ts';
import { type ConnectionFlags, connect } from './job.ts';

export function registerMcpCommand(program: Command): void {
  program
    .command('mcp')
    .description(
      'run an MCP server on stdio for one project (DOCWRIGHT_URL, DOCWRIGHT_API_KEY, DOCWRIGHT_PROJECT)',
    )
    .option('--url <url>', 'docwright server URL (default: DOCWRIGHT_URL)')
    .option('--project <id>', 'project id (default: DOCWRIGHT_PROJECT)')
    .action(async (flags: ConnectionFlags) => {
      const { client, projectId } = connect(flags);
      const server = createMcpServer(client, projectId);
      const transport = new StdioTransport();
      await server.connect(transport);
      // The client closing stdin ends the session: no one is left to read a result.
      process.stdin.once('end', () => process.exit(0));
      process.stderr.write(`docwright MCP server for project ${projectId} on stdio\n`);
    });
}
