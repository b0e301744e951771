import type { LexicalIndex, SqlDatabase } from '@agentinfra/core';

/** Table prefix of the memory module's lexical index (`memory_lexical_docs`, …). */
export const LEXICAL_TABLE = 'memory_lexical';

/**
 * The lexical index over the text of semantic memories in `memory_records`
 * (the lexical leg of /mem/query). It follows the records table through
 * database triggers, so a record and its lexical entry are written and
 * deleted in one transaction; it does not depend on the embedder, so a
 * re-embed leaves it as it is.
 */
export function memoryLexicalIndex(sql: SqlDatabase): LexicalIndex {
  return sql.lexicalIndex({
    table: LEXICAL_TABLE,
    source: {
      table: 'memory_records',
      key: 'id',
      text: 'text',
      owner: 'agent_id',
      scopes: 'scope',
      only: { column: 'kind', equals: 'semantic' },
    },
  });
}
