/**
 * Text that arrives in pieces (an HTTP body, git's output), handed on one line at a time, so
 * that a reader of a 50 MB diff holds one line and can stop at any line. A line longer than
 * `maxLineLength` is cut to it (the rest of that line is dropped), so one endless line cannot
 * fill the memory either.
 */
export class LineSplitter {
  readonly #onLine: (line: string) => boolean | undefined;
  readonly #maxLineLength: number;
  #line = '';
  #cut = false;
  #stopped = false;

  /** `onLine` gets each line without its `\n` (or `\r\n`); answering `false` stops the splitter. */
  constructor(onLine: (line: string) => boolean | undefined, maxLineLength = 64 * 1024) {
    this.#onLine = onLine;
    this.#maxLineLength = maxLineLength;
  }

  /** Whether `onLine` asked to stop. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Takes the next piece; false once `onLine` has asked to stop (the rest is ignored). */
  push(piece: string): boolean {
    let start = 0;
    while (!this.#stopped) {
      const end = piece.indexOf('\n', start);
      this.#append(piece.slice(start, end < 0 ? piece.length : end));
      if (end < 0) break;
      this.#emit();
      start = end + 1;
    }
    return !this.#stopped;
  }

  /** The text has ended: the last line, if it had no line end, is handed on too. */
  end(): boolean {
    if (!this.#stopped && (this.#line !== '' || this.#cut)) this.#emit();
    return !this.#stopped;
  }

  #append(text: string) {
    if (this.#cut || text === '') return;
    this.#line += text;
    if (this.#line.length > this.#maxLineLength) {
      this.#line = this.#line.slice(0, this.#maxLineLength);
      this.#cut = true;
    }
  }

  #emit() {
    const line = this.#line.endsWith('\r') ? this.#line.slice(0, -1) : this.#line;
    this.#line = '';
    this.#cut = false;
    if (this.#onLine(line) === false) this.#stopped = true;
  }
}
