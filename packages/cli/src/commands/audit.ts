import { type ChainReport, createAuditLog, systemClock } from '@agentinfra/core';
import { openDatabase } from '../adapters.js';
import { CliError } from '../cli-error.js';
import { requireDatabaseFile } from '../data-dir.js';
import { loadConfigOrExit } from '../server.js';

/** The one-line summary of a verification; `ok` lines go to stdout, breaks to stderr. */
export function describeChainReport(report: ChainReport): string {
  const range = report.head.seq > report.anchor.seq ? `seq ${report.anchor.seq + 1}..${report.head.seq}` : 'no events';
  const anchor = report.anchor.seq > 0 ? `, retention anchor at seq ${report.anchor.seq}` : '';
  if (report.ok) return `audit chain ok: ${report.checked} events checked (${range}${anchor}), head ${report.head.hash}`;
  const problem = report.problem;
  return `audit chain BROKEN at seq ${problem?.seq}: ${problem?.reason}; ${report.checked} events verified before it (${range}${anchor})`;
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
