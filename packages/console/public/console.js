// agentinfra console: the only script. Progressive enhancement: copy buttons and confirmations.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  if (!source) return;
  navigator.clipboard.writeText(source.textContent).then(
    () => {
      button.textContent = 'Copied';
    },
    () => {
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      button.textContent = 'Selected: press Ctrl+C';
    },
  );
});

document.addEventListener('submit', (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.getAttribute('data-confirm') : null;
  if (question && !window.confirm(question)) event.preventDefault();
});
