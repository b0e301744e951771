import { type ChainReport, createAuditLog, systemClock } from '@agentinfra/core';
import { openDatabase } from '../adapters.js';
import { CliError } from '../cli-error.js';
import { requireDatabaseFile } from '../data-dir.js';
import { loadConfigOrExit } from '../server.js';

/**
 * The one-line summary of a verification; `ok` lines go to stdout, breaks to stderr.
 * A break names the range of the events verified before it (they follow the retention anchor).
 */
export function describeChainReport(report: ChainReport): string {
  const { anchor, head, checked } = report;
  const range = (last: number) => (last > anchor.seq ? `seq ${anchor.seq + 1}..${last}` : null);
  const anchored = anchor.seq > 0 ? `retention anchor at seq ${anchor.seq}` : null;
  const bracketed = (...parts: Array<string | null>) => {
    const text = parts.filter(Boolean).join(', ');
    return text ? ` (${text})` : '';
  };
  if (report.ok)
    return `audit chain ok: ${checked} events checked${bracketed(range(head.seq) ?? 'no events', anchored)}, head ${head.hash}`;
  const verified = bracketed(range(anchor.seq + checked), anchored);
  return `audit chain BROKEN at seq ${report.problem?.seq}: ${report.problem?.reason}; ${checked} events verified before it${verified}`;
}

/**
 * `agentinfra audit verify`: walks the audit log's hash chain from the
 * retention anchor to the head, on the database the config selects, and
 * prints a summary (JSON with `--json`). Shows progress on a terminal.
 * @throws CliError exit 1 when the chain is broken (an edited, deleted or inserted row) or the
 *   database has no audit log yet (run `agentinfra migrate`); exit 2 on invalid config or when
 *   the SQLite file does not exist (it is never created here).
 */
export async function runAuditVerify(options: { config?: string; json?: boolean }): Promise<void> {
  const config = loadConfigOrExit({ file: options.config });
  if (!config.core.databaseUrl) requireDatabaseFile(config);
  const sql = await openDatabase(config.core);
  let report: ChainReport;
  try {
    const hasLog = await sql.knex.schema.hasTable('core_audit_state');
    if (!hasLog) throw new CliError('this database has no audit log yet: run `agentinfra migrate` (or `serve`) first.', 1);
    const progress = process.stderr.isTTY && !options.json;
    report = await createAuditLog({ knex: sql.knex, clock: systemClock }).verify({
      onProgress: progress ? (checked, total) => process.stderr.write(`\rverifying audit chain: ${checked}/${total}`) : undefined,
    });
    if (progress) process.stderr.write('\n');
  } finally {
    await sql.close();
  }
  if (options.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else if (report.ok) process.stdout.write(`${describeChainReport(report)}\n`);
  if (!report.ok) throw new CliError(describeChainReport(report), 1);
}
