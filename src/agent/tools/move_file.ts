import { z } from 'zod';
import type { AgentTool } from './tool.ts';

const parameters = z.object({
  from: z.string().describe('Existing file to move, relative to the repository root.'),
  to: z
    .string()
    .describe(
      'New path, relative to the repository root; it must not exist yet. Missing folders are created.',
    ),
});

export const moveFile: AgentTool<z.infer<typeof parameters>> = {
  name: 'move_file',
  description:
    'Move or rename a documentation file. The destination must not exist. Afterwards, search for links and navigation entries (docs.json, mint.json, sidebars…) that use the old path and update them.',
  parameters,
  async execute({ from, to }, { workspace }) {
    const moved = workspace.moveFile(from, to);
    return `Moved ${moved.from.relative} to ${moved.to.relative}.`;
  },
};
