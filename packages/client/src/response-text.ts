/**
 * Reads a response body as UTF-8 text, at most `maxBytes` bytes of it; the
 * rest of a longer body is cancelled unread, so a huge body is never buffered.
 * @returns the text of the bytes read, and `truncated`: whether the body was longer than `maxBytes`.
 * @throws what reading the body throws (a reset connection, an abort).
 */
export async function readTextUpTo(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let left = maxBytes;
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    if (read.value.byteLength > left) {
      text += decoder.decode(read.value.subarray(0, left));
      await reader.cancel().catch(() => {});
      return { text, truncated: true };
    }
    left -= read.value.byteLength;
    text += decoder.decode(read.value, { stream: true });
  }
  return { text: text + decoder.decode(), truncated: false };
}
