import { z } from 'zod';
import { formatBytes } from '../format.ts';
import { plural, splitLines } from './shared.ts';
import type { AgentTool } from './tool.ts';

const parameters = z.object({
  path: z
    .string()
    .describe(
      'File to write, relative to the repository root, e.g. "docs/guides/setup.mdx". Missing folders are created.',
    ),
  content: z.string().describe('The complete new content of the file.'),
});

export const writeFile: AgentTool<z.infer<typeof parameters>> = {
  name: 'write_file',
  description:
    'Create a new file with the given content, or replace the whole content of an existing file. An existing file must have been read with read_file in this run (and not changed since). To change part of a file, prefer edit_file. Only documentation files may be written.',
  parameters,
  async execute({ path, content }, { workspace }) {
    const written = workspace.writeFile(path, content);
    const size = formatBytes(Buffer.byteLength(content));
    const lines = plural(splitLines(content).length, 'line');
    return `${written.created ? 'Created' : 'Overwrote'} ${written.relative} (${lines}, ${size}).`;
  },
};
