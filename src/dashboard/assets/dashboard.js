// docwright dashboard: small enhancements on top of pages that work without JavaScript.

// Copy buttons: <button data-copy="element-id">. The value is also selectable by hand.
document.addEventListener('click', (event) => {
  const button = event.target.closest('[data-copy]');
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  if (!source) return;
  const text = 'value' in source ? source.value : source.textContent;
  const done = () => {
    const label = button.textContent;
    button.textContent = 'Copied';
    setTimeout(() => {
      button.textContent = label;
    }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => source.select?.());
  } else {
    source.select?.();
    try {
      document.execCommand('copy');
      done();
    } catch {
      // The text stays selected for the person to copy.
    }
  }
});

// Live transcript: keep the newest step in view when the reader is already at the bottom.
document.addEventListener('htmx:sseBeforeMessage', () => {
  const el = document.scrollingElement;
  window.__dwFollow = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
});
document.addEventListener('htmx:sseMessage', (event) => {
  if (event.detail?.type === 'transcript' && window.__dwFollow) {
    const el = document.scrollingElement;
    el.scrollTop = el.scrollHeight;
  }
});
