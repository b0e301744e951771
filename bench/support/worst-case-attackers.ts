/**
 * The load of the worst-case benchmark, run as its own process (`node
 * --import tsx worst-case-attackers.ts '<json plan>'`) so that its CPU is
 * not charged to the probe's or the server's event loop. The plan
 * ({@link AttackPlan}) names the attacks (indices into worst-inputs.ts),
 * the number of clients and the duration; each client sends one request at
 * a time over its own kept-alive connection, cycling through the attacks
 * from a different starting point. Prints `started` when the first requests
 * go out, then, after the last answer, one line `result <json>` with an
 * {@link AttackTally} per attack name.
 */
import { type AttackTarget, createAttackContext } from './attack-context.js';
import { attacks } from './worst-inputs.js';

/** What to run against which server. */
export interface AttackPlan extends AttackTarget {
  /** Indices into `attacks`. */
  attacks: number[];
  clients: number;
  seconds: number;
}

/** Answers to one attack: counts by status (HTTP status or SMTP code), failures without an answer, slowest answer in ms. */
export interface AttackTally {
  sent: number;
  statuses: Record<string, number>;
  failures: number;
  /** First failure message, if any. */
  failure?: string;
  maxMs: number;
}

const plan = JSON.parse(process.argv[2] ?? '{}') as AttackPlan;
const chosen = plan.attacks.map((index) => attacks[index]!);
const tallies = new Map(chosen.map((attack) => [attack.name, { sent: 0, statuses: {}, failures: 0, maxMs: 0 } as AttackTally]));
const deadline = performance.now() + plan.seconds * 1000;

async function client(number: number): Promise<void> {
  const context = createAttackContext(plan, number);
  for (let round = 0; performance.now() < deadline; round += 1) {
    const attack = chosen[(number + round) % chosen.length]!;
    const tally = tallies.get(attack.name)!;
    const started = performance.now();
    tally.sent += 1;
    try {
      const status = String(await attack.run(context, Math.floor(round / chosen.length) + number));
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
    } catch (error) {
      tally.failures += 1;
      tally.failure ??= (error as Error).message;
    }
    tally.maxMs = Math.max(tally.maxMs, performance.now() - started);
  }
  context.close();
}

process.stdout.write('started\n');
await Promise.all(Array.from({ length: plan.clients }, (_, number) => client(number)));
process.stdout.write(`result ${JSON.stringify(Object.fromEntries(tallies))}\n`);
