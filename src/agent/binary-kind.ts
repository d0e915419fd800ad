/**
 * What kind of binary file a path names, from its extension, for read_change's account of a
 * binary file in a change (its content is never shown, so its name is most of what is known).
 */

const KINDS: [RegExp, string][] = [
  [/\.(png|jpe?g|gif|webp|bmp|ico|tiff?|avif|heic|psd)$/i, 'image'],
  [/\.pdf$/i, 'PDF document'],
  [/\.(zip|gz|tgz|bz2|xz|7z|rar|tar|zst)$/i, 'archive'],
  [/\.(jar|war|class)$/i, 'Java archive or class'],
  [/\.(woff2?|ttf|otf|eot)$/i, 'font'],
  [/\.(mp3|wav|flac|ogg|m4a|aac)$/i, 'audio'],
  [/\.(mp4|mov|avi|webm|mkv)$/i, 'video'],
  [/\.wasm$/i, 'WebAssembly module'],
  [/\.(so|dylib|dll|exe|o|a|lib|bin)$/i, 'compiled binary'],
  [/\.(sqlite3?|db)$/i, 'database file'],
  [/\.(docx?|xlsx?|pptx?|odt|ods|odp)$/i, 'office document'],
];

/** "image (.png)", or "binary file (.dat)", or "binary file". */
export function binaryKind(path: string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? name.slice(dot) : '';
  const kind = KINDS.find(([pattern]) => pattern.test(name))?.[1] ?? 'binary file';
  return extension ? `${kind} (${extension})` : kind;
}
