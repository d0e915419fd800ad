/** How the agent's messages show sizes. */

/** "512 bytes", "1 MiB", "1.5 KiB"; exact bytes where one decimal would hide a difference. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return bytes === 1 ? '1 byte' : `${bytes} bytes`;
  const [value, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KiB'] : [bytes / (1024 * 1024), 'MiB'];
  if (Number.isInteger(value)) return `${value} ${unit}`;
  const rounded = value.toFixed(1);
  return rounded.endsWith('.0') ? `${bytes.toLocaleString('en-US')} bytes` : `${rounded} ${unit}`;
}
