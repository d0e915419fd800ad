const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * A progress line redrawn in place on a terminal: a spinning frame, then `text` (cut to the
 * terminal's width). `update()` changes the text; `stop()` erases the line.
 */
export function spinner(stream: NodeJS.WriteStream, text: string) {
  let current = text;
  let frame = 0;
  const draw = () => {
    const line = `${FRAMES[frame++ % FRAMES.length]} ${current}`;
    stream.write(`\r\x1b[K${line.slice(0, Math.max(20, (stream.columns ?? 80) - 1))}`);
  };
  draw();
  const timer = setInterval(draw, 80);
  timer.unref();
  return {
    update(next: string) {
      current = next;
    },
    stop() {
      clearInterval(timer);
      stream.write('\r\x1b[K');
    },
  };
}
