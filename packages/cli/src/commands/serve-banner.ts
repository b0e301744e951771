import type { Kernel, ServerConfig } from '@agentinfra/core';

/** What agent-gateway's service tells about its HTTP-01 challenge listener. */
interface Http01Listener {
  /** The port it listens on, or null when it is off or could not bind. */
  http01Port(): number | null;
}

/** `host:port`, with an IPv6 host in brackets. */
function hostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The ACME HTTP-01 challenge listener as the banner names it, `acme http-01 on 127.0.0.1:80`; undefined when the
 * gateway is not loaded or its listener is not open (dns-01, port 0, or a port it could not bind).
 */
function acmeListener(kernel: Kernel, config: ServerConfig): string | undefined {
  const gateway = config.modules['agent-gateway'] as { httpHost?: string } | undefined;
  if (!gateway) return undefined;
  const port = kernel.service<Http01Listener>('agent-gateway').http01Port();
  return port === null ? undefined : `acme http-01 on ${hostPort(gateway.httpHost ?? config.core.host, port)}`;
}

/**
 * The one line `serve` prints once it listens, which scripts wait for:
 * `agentinfra listening on <url> (<adapters>; <what modules report, e.g. smtp on 127.0.0.1:2525>; acme http-01 on
 * <host:port>; metrics on <url>)`, the last two only when those listeners are open.
 * @param listen what `kernel.listen()` resolved with: the API's URL and the metrics listener's, if any.
 */
export function listeningLine(kernel: Kernel, config: ServerConfig, summary: string, listen: { url: string; metricsUrl?: string }): string {
  const acme = acmeListener(kernel, config);
  const parts = [
    summary,
    ...kernel.describeModules(),
    ...(acme ? [acme] : []),
    ...(listen.metricsUrl ? [`metrics on ${listen.metricsUrl}`] : []),
  ];
  return `agentinfra listening on ${listen.url} (${parts.join('; ')})\n`;
}
