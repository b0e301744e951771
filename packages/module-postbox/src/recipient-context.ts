import type { Knex } from 'knex';
import type { MailRule, RuleAction, RuleMatch } from './rules.js';
import type { WebhookSubscription } from './webhooks.js';

/** What filing inbound mail needs to know about its recipients. */
export interface RecipientContext {
  /** Recipient address → the agent owning it (addresses nobody owns are absent). */
  owners: Map<string, string>;
  /** Agent → its rules, in no particular order (`applyRules` sorts them). */
  rules: Map<string, MailRule[]>;
  /** Agent → its webhooks (agents without any are absent). */
  webhooks: Map<string, WebhookSubscription[]>;
}

/** One row of the combined read: `kind` says which table it came from. */
interface ContextRow {
  kind: 'address' | 'rule' | 'webhook';
  agent_id: string;
  /** The address, the rule's name or the webhook's id. */
  name: string;
  /** The rule's match (JSON) or the webhook's events (JSON); null for an address. */
  spec: string | null;
  /** The rule's actions (JSON); null otherwise. */
  actions: string | null;
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Reads the owners of `addresses` (lower-case, bare) with their agents'
 * rules and webhooks in one statement (a `UNION ALL` over
 * `postbox_addresses`, `postbox_rules` and `postbox_webhooks`), so storing a
 * batch of inbound mail costs one round trip for all of it.
 * @param alsoAgents agents whose rules and webhooks are read too, though they may hold none of
 *   `addresses` (the agent receiving postmaster mail, see `postmaster.ts`).
 * @throws the driver's error (via knex) when the query fails.
 */
export async function readRecipientContext(
  knex: Knex | Knex.Transaction,
  addresses: readonly string[],
  alsoAgents: readonly string[] = [],
): Promise<RecipientContext> {
  const context: RecipientContext = { owners: new Map(), rules: new Map(), webhooks: new Map() };
  if (addresses.length === 0) return context;
  const ownersOf = () =>
    knex('postbox_addresses')
      .whereIn('address', [...addresses])
      .select('agent_id');
  const ofRecipients = (query: Knex.QueryBuilder) =>
    alsoAgents.length === 0
      ? query.whereIn('agent_id', ownersOf())
      : query.where((inner) => inner.whereIn('agent_id', ownersOf()).orWhereIn('agent_id', [...alsoAgents]));
  const rows = (await knex
    .select(knex.raw("'address' as kind"), 'agent_id', 'address as name', knex.raw('null as spec'), knex.raw('null as actions'))
    .from('postbox_addresses')
    .whereIn('address', [...addresses])
    .unionAll((union) => ofRecipients(union.select(knex.raw("'rule'"), 'agent_id', 'name', 'match', 'actions').from('postbox_rules')))
    .unionAll((union) =>
      ofRecipients(union.select(knex.raw("'webhook'"), 'agent_id', 'id', 'events', knex.raw('null')).from('postbox_webhooks')),
    )) as ContextRow[];
  for (const row of rows) {
    if (row.kind === 'address') context.owners.set(row.name, row.agent_id);
    else if (row.kind === 'rule') {
      push(context.rules, row.agent_id, {
        name: row.name,
        match: JSON.parse(row.spec ?? '{}') as RuleMatch,
        actions: JSON.parse(row.actions ?? '[]') as RuleAction[],
      });
    } else push(context.webhooks, row.agent_id, { id: row.name, agent_id: row.agent_id, events: row.spec ?? '[]' });
  }
  return context;
}
