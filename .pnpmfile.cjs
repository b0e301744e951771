// pnpm hooks for this workspace (pnpm loads this file on install, run, exec).
//
// Native addons (better-sqlite3) first try a prebuilt binary and otherwise
// compile with node-gyp, which downloads Node's headers unless
// `npm_config_nodedir` names a folder that has them. On a machine that cannot
// reach either download, `pnpm install` typed as the README says would stop
// there. So when the variable is not set and the running Node's own headers
// are installed (`<prefix>/include/node`, as in nodejs.org builds, nvm, and
// Debian's nodejs under /usr), the build scripts get it pointing there. A
// machine that can download a prebuilt binary still uses it: nodedir only
// matters when node-gyp compiles.
'use strict';

const { existsSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');

/**
 * The first install prefix whose `include/node/node_version.h` declares the
 * running Node's ABI (`NODE_MODULE_VERSION`, e.g. 115 for Node 20), or
 * undefined: headers of another Node version would build an addon that
 * fails to load.
 */
function localNodeHeadersPrefix() {
  const prefixes = [dirname(dirname(process.execPath)), '/usr'];
  return prefixes.find((prefix) => {
    const versionHeader = join(prefix, 'include', 'node', 'node_version.h');
    if (!existsSync(join(prefix, 'include', 'node', 'node.h')) || !existsSync(versionHeader)) return false;
    const abi = /#define NODE_MODULE_VERSION (\d+)/.exec(readFileSync(versionHeader, 'utf8'));
    return abi !== null && abi[1] === process.versions.modules;
  });
}

/** Adds `npm_config_nodedir` to the scripts' environment unless the user set one. */
function updateConfig(config) {
  const extraEnv = config.extraEnv ?? {};
  const userSet = process.env.npm_config_nodedir || process.env.NPM_CONFIG_NODEDIR || extraEnv.npm_config_nodedir;
  if (userSet) return config;
  const prefix = localNodeHeadersPrefix();
  if (prefix === undefined) return config;
  return { ...config, extraEnv: { ...extraEnv, npm_config_nodedir: prefix } };
}

module.exports = { hooks: { updateConfig } };
