import type { Child } from 'hono/jsx';

/**
 * `text` with a line-break opportunity (`<wbr>`) after each `/`, `:`, `.`,
 * `_` and `@`, so a path or a scoped id such as
 * `agent-scheduler/admin/summary` or `agent:alice/secret:api_token` wraps
 * between its parts rather than inside one (the browser already breaks
 * after `-`).
 */
export function breakAfterSeparators(text: string): Child[] {
  return text.split(/(?<=[/:._@])/).flatMap((piece, index) => (index === 0 ? [piece] : [<wbr />, piece]));
}
