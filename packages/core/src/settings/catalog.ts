import { z } from 'zod';

/** One service setting: its schema (bounds and type), default and meaning. */
export interface SettingDefinition {
  key: string;
  description: string;
  schema: z.ZodType;
  default: unknown;
}

/**
 * The settings allow-list (CONTRACT.md "Defaults and bounds"). /settings/set
 * refuses any other key, and any value failing its schema.
 */
export const settingsCatalog: readonly SettingDefinition[] = [
  {
    key: 'postbox_retention_days',
    description: 'Days inbound and outbound mail (and its raw MIME) is kept before the daily retention job deletes it.',
    schema: z.number().int().min(1).max(3650),
    default: 30,
  },
  {
    key: 'postbox_send_quota_per_day',
    description: 'Outbound messages each agent may send per rolling 24 hours; the next /send gets 429.',
    schema: z.number().int().min(0).max(1_000_000),
    default: 100,
  },
  {
    key: 'postbox_quarantine_threshold',
    description: 'Inbound mail whose injection_score is at or above this value is quarantined.',
    schema: z.number().min(0).max(1),
    default: 0.5,
  },
  {
    key: 'artifacts_max_bytes_per_agent',
    description:
      "Bytes each agent's artifacts may take together (pending registrations at their declared size); a /register past it gets 413 once the agent's expired artifacts are purged.",
    schema: z
      .number()
      .int()
      .min(1_048_576)
      .max(2 ** 50),
    default: 50 * 2 ** 30,
  },
  {
    key: 'memory_max_records_per_agent',
    description:
      'Memories (/mem/write, every kind) each agent may hold; the next write gets 409 until it forgets some. Checked per process against a count refreshed every minute.',
    schema: z.number().int().min(1).max(1_000_000_000),
    default: 1_000_000,
  },
  {
    key: 'memory_max_kv_entries_per_agent',
    description:
      'Keys (/kv/put) each agent may hold; a put of a new key gets 409 beyond it. Checked per process against a count refreshed every minute.',
    schema: z.number().int().min(1).max(1_000_000_000),
    default: 100_000,
  },
  {
    key: 'postbox_max_addresses_per_agent',
    description:
      'Addresses (/alloc) each agent may hold, so that one agent cannot take every name of the mail domain; the next /alloc gets 409.',
    schema: z.number().int().min(1).max(1_000_000),
    default: 100,
  },
  {
    key: 'scheduler_max_jobs_per_agent',
    description: 'Scheduler jobs each agent may hold (each calls back on its cadence); a /job/put of a new name gets 409 beyond it.',
    schema: z.number().int().min(1).max(1_000_000),
    default: 1_000,
  },
  {
    key: 'gateway_max_hosts_per_agent',
    description:
      'Hosts each agent may hold, bound or being claimed (every bound host orders certificates from the one ACME account); a /host/claim of another host gets 409.',
    schema: z.number().int().min(1).max(1_000_000),
    default: 100,
  },
  {
    key: 'identity_max_secrets_per_agent',
    description:
      "Secrets (/secrets/put) each agent may hold; a put of a new key gets 409 beyond it (replacing a stored key does not). The default is /secrets/list's largest page.",
    schema: z.number().int().min(1).max(1_000_000),
    default: 500,
  },
  {
    key: 'identity_max_live_delegations_per_agent',
    description:
      'Live delegations (neither revoked nor expired) each agent may have given, those made with its delegation tokens included; the next /delegate gets 409.',
    schema: z.number().int().min(1).max(1_000_000),
    default: 10_000,
  },
  {
    key: 'audit_retention_days',
    description:
      'Days audit events are kept before the hourly sweep removes them; the hash of the last removed event is kept, so the rest still verifies.',
    schema: z.number().int().min(1).max(36500),
    default: 365,
  },
];
