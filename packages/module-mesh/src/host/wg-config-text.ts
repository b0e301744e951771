import { MeshHostError } from './host-error.js';

/** wg-quick hooks run as root: only the mesh's own nftables command shape is accepted. */
const HOOK_LINE = /^(PreUp|PostUp|PreDown|PostDown)\s*=/;
const NFT_HOOK = /^(PreUp|PostUp|PreDown|PostDown)\s*=\s*nft '[^']*'\s*$/;

/**
 * Puts `privateKey` into the `PrivateKey` line of the `[Interface]` section
 * of the server's wg-quick text.
 * @throws MeshHostError when there is no such line, or when a hook line
 *   (`PreUp`/`PostUp`/`PreDown`/`PostDown`, which wg-quick runs as root) is
 *   anything but an `nft '…'` command: such a config is not written.
 */
export function fillPrivateKey(text: string, privateKey: string): string {
  let section = '';
  let filled = 0;
  const lines = text.split('\n').map((line) => {
    const trimmed = line.trim();
    if (/^\[.*\]$/.test(trimmed)) section = trimmed.toLowerCase();
    if (HOOK_LINE.test(trimmed) && !NFT_HOOK.test(trimmed)) {
      throw new MeshHostError(
        `The server's config holds a hook that is not an nftables command; refusing to write it: ${trimmed.slice(0, 120)}`,
        1,
      );
    }
    if (section === '[interface]' && /^PrivateKey\s*=/.test(trimmed)) {
      filled += 1;
      return `PrivateKey = ${privateKey}`;
    }
    return line;
  });
  if (filled !== 1) throw new MeshHostError(`The server's config has ${filled} PrivateKey lines in [Interface]; expected one.`, 1);
  return lines.join('\n');
}
