import { parseArgs } from 'node:util';
import { DEFAULT_COMPACTION } from '../compaction-parameters.js';
import { defaultVectorsFile } from '../default-vectors-file.js';
import { buildVectorsFile, isVectorsFileCurrent } from './vectors-file-build.js';

/**
 * `build:vectors [--output PATH] [--vocabulary-size N] [--if-outdated]`:
 * writes the compact word vectors file (default: the package's
 * `data/wordvec-sg100-q8.wv8`). With `--if-outdated` it does nothing when the
 * file already exists and was built with the same parameters, which keeps
 * repeated `pnpm install` runs fast.
 */
const { values } = parseArgs({
  options: {
    output: { type: 'string' },
    'vocabulary-size': { type: 'string' },
    'if-outdated': { type: 'boolean', default: false },
  },
});
const output = values.output ?? defaultVectorsFile();
const vocabularySize = Number(values['vocabulary-size'] ?? DEFAULT_COMPACTION.vocabularySize);
if (!Number.isInteger(vocabularySize) || vocabularySize < 1) {
  console.error(`--vocabulary-size must be a positive integer, got ${values['vocabulary-size']}`);
  process.exit(2);
}
const parameters = { ...DEFAULT_COMPACTION, vocabularySize };
if (values['if-outdated'] && (await isVectorsFileCurrent(output, parameters))) {
  console.log(`[adapter-wordvec] ${output} is up to date`);
} else {
  await buildVectorsFile({ output, parameters, log: (line) => console.log(`[adapter-wordvec] ${line}`) });
}
