import { MeshHostError } from './host-error.js';

/** Keys of the hooks wg-quick runs as root (with `eval`), lower-cased. */
const HOOK_KEYS = new Set(['preup', 'postup', 'predown', 'postdown']);
/** The only hook value accepted: the mesh's own nftables command shape. */
const NFT_COMMAND = /^nft '[^']*'$/;

/**
 * A line as wg-quick's `parse_options` reads it: the text before any `#`,
 * split at the first `=`, both sides trimmed; the key lower-cased, since
 * wg-quick matches keys and section headers with `nocasematch`
 * (`POSTUP = …` runs like `PostUp = …`).
 */
function wgQuickLine(line: string): { key: string; value: string } {
  const stripped = line.split('#', 1)[0] as string;
  const equals = stripped.indexOf('=');
  if (equals < 0) return { key: stripped.trim().toLowerCase(), value: '' };
  return { key: stripped.slice(0, equals).trim().toLowerCase(), value: stripped.slice(equals + 1).trim() };
}

/**
 * Puts `privateKey` into the `PrivateKey` line of the `[Interface]` section
 * of the server's wg-quick text.
 * @throws MeshHostError when there is no such line, or when a hook line
 *   (`PreUp`/`PostUp`/`PreDown`/`PostDown` in any case, which wg-quick runs
 *   as root) is anything but an `nft '…'` command: such a config is not written.
 */
export function fillPrivateKey(text: string, privateKey: string): string {
  let section = '';
  let filled = 0;
  const lines = text.split('\n').map((line) => {
    const { key, value } = wgQuickLine(line);
    if (key.startsWith('[')) section = key;
    if (HOOK_KEYS.has(key) && !NFT_COMMAND.test(value)) {
      throw new MeshHostError(
        `The server's config holds a hook that is not an nftables command; refusing to write it: ${line.trim().slice(0, 120)}`,
        1,
      );
    }
    if (section === '[interface]' && key === 'privatekey') {
      filled += 1;
      return `PrivateKey = ${privateKey}`;
    }
    return line;
  });
  if (filled !== 1) throw new MeshHostError(`The server's config has ${filled} PrivateKey lines in [Interface]; expected one.`, 1);
  return lines.join('\n');
}
