/** How the MCP tools answer (docs/mcp.mdx): a summary line and the JSON, or a tool error with the API's message. */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DocwrightApiError } from '../client/errors.ts';

/** A result: the summary line, then the JSON (also as structured content). */
export function answer(summary: string, value: object): CallToolResult {
  return {
    content: [
      { type: 'text', text: summary },
      { type: 'text', text: JSON.stringify(value, null, 2) },
    ],
    structuredContent: value as Record<string, unknown>,
  };
}

/** Runs a tool; the API's refusals become tool errors the model can read and act on. */
export async function tool(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof DocwrightApiError)) throw error;
    return { isError: true, content: [{ type: 'text', text: error.detail }] };
  }
}
