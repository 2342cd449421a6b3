// The console's only script: copy buttons, panels that refresh themselves while a page is open, and
// a dialog asking before a revocation.
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

// A form with data-confirm (views/confirm.ts) asks in a dialog before it is sent, and is sent with
// `confirm` when the answer is yes. Without the script the server asks on a page of its own.
for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    askFirst(form);
  });
}

function askFirst(form) {
  const dialog = document.createElement('dialog');
  dialog.className = 'confirm';
  dialog.setAttribute('aria-labelledby', 'confirm-question');
  dialog.setAttribute('aria-describedby', 'confirm-detail');
  const question = document.createElement('h2');
  question.id = 'confirm-question';
  question.textContent = form.dataset.confirm;
  const detail = document.createElement('p');
  detail.id = 'confirm-detail';
  detail.textContent = form.dataset.confirmDetail || '';
  const yes = document.createElement('button');
  yes.type = 'button';
  yes.className = 'danger';
  yes.textContent = form.dataset.confirmButton || 'Confirm';
  const no = document.createElement('button');
  no.type = 'button';
  no.className = 'secondary';
  no.textContent = 'Cancel';
  // The safe answer has the focus: Enter or Escape at once changes nothing.
  no.autofocus = true;
  const buttons = document.createElement('div');
  buttons.className = 'buttons';
  buttons.append(yes, no);
  dialog.append(question, detail, buttons);
  yes.addEventListener('click', () => {
    const confirmed = document.createElement('input');
    confirmed.type = 'hidden';
    confirmed.name = 'confirm';
    confirmed.value = 'true';
    form.append(confirmed);
    dialog.close();
    // submit() sends the form without another submit event, so the dialog is not asked again.
    form.submit();
  });
  no.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
