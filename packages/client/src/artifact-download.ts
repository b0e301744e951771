import { type CallSignal, callSignal } from './call-signal.js';
import { AgentInfraError, errorOfResponse } from './errors.js';
import type { CallOptions, TransportOptions } from './transport.js';

/** `body` re-streamed with the deadline armed while a read waits for the network, and failures typed. */
function watched(body: ReadableStream<Uint8Array>, deadline: CallSignal): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      deadline.restart();
      try {
        const next = await reader.read();
        deadline.stop();
        if (!next.done) return controller.enqueue(next.value);
        deadline.dispose();
        controller.close();
      } catch (error) {
        deadline.dispose();
        controller.error(deadline.failure(error, 'Download'));
      }
    },
    async cancel(reason) {
      deadline.dispose();
      await reader.cancel(reason);
    },
  });
}

/**
 * Opens a download: the signed URL from `url` (what /fetch or /download
 * returned) as a stream of bytes. `timeoutMs` (the call's, else the client's)
 * bounds the wait for the response headers, then each wait for the next chunk
 * while the stream is read.
 * @throws AgentInfraError when the blob store refuses (e.g. 403 expired URL, 404), `timeout`, `aborted` (the call's
 *   signal) or `network_error`; reading the stream fails with the same codes.
 */
export async function openDownload(
  transport: Pick<TransportOptions, 'fetch' | 'timeoutMs'>,
  url: string,
  options: CallOptions = {},
): Promise<ReadableStream<Uint8Array>> {
  const deadline = callSignal(options.signal, options.timeoutMs ?? transport.timeoutMs);
  try {
    const response = await transport.fetch(url, { signal: deadline.signal });
    if (!response.ok) throw await errorOfResponse(response);
    if (!response.body)
      throw new AgentInfraError({ status: response.status, code: 'invalid_response', message: 'The download has no body.' });
    deadline.stop();
    return watched(response.body as ReadableStream<Uint8Array>, deadline);
  } catch (error) {
    deadline.dispose();
    throw deadline.failure(error, 'Download');
  }
}
