// The console's only script: copy buttons, and panels that refresh themselves while a page is open.
// Everything else works without it.

for (const button of document.querySelectorAll('button[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const source = document.getElementById(button.dataset.copy);
    if (!source) return;
    try {
      await navigator.clipboard.writeText(source.textContent.trim());
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Select and copy';
    }
    setTimeout(() => {
      button.textContent = 'Copy';
    }, 2000);
  });
}

// A panel with data-refresh is replaced by the page fragment at that URL every few seconds, until
// the session ends (the server then answers 401).
for (const panel of document.querySelectorAll('[data-refresh]')) {
  const every = Number(panel.dataset.every || 3000);
  const refresh = async () => {
    try {
      const response = await fetch(panel.dataset.refresh, { credentials: 'same-origin' });
      if (response.status === 401) {
        panel.textContent = 'This page’s session has ended: open the setup link again to go on.';
        return;
      }
      if (response.ok && response.headers.get('content-type')?.startsWith('text/html'))
        panel.innerHTML = await response.text();
    } catch {
      // Offline for a moment: the next round tries again.
    }
    setTimeout(refresh, every);
  };
  setTimeout(refresh, every);
}
