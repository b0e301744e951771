/** `text` with the five HTML-special characters escaped, safe in element content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * The small Markdown subset OpenAPI descriptions here use, as HTML:
 * paragraphs (blank lines), `code` and **strong**. Everything else is
 * escaped text.
 */
export function markdownToHtml(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((paragraph) => paragraph.trim())
    .filter((paragraph) => paragraph.length > 0)
    .map((paragraph) => `<p>${inlineMarkdown(paragraph)}</p>`)
    .join('\n');
}

/** One line of Markdown (`code`, **strong**) as HTML, without a paragraph. */
export function inlineMarkdown(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
}
