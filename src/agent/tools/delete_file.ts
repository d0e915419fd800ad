import { z } from 'zod';
import type { AgentTool } from './tool.ts';

const parameters = z.object({
  path: z.string().describe('File to delete, relative to the repository root.'),
});

export const deleteFile: AgentTool<z.infer<typeof parameters>> = {
  name: 'delete_file',
  description:
    'Delete a documentation file. Afterwards, search for links and navigation entries (docs.json, mint.json, sidebars…) that still point to it and update them.',
  parameters,
  async execute({ path }, { workspace }) {
    const { relative } = workspace.deleteFile(path);
    return `Deleted ${relative}.`;
  },
};
