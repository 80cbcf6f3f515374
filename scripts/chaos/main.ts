/**
 * `npm run chaos -- [--followups N] [--kills K] [--restart-server | --no-restart-server] [--seed S] [--report FILE]`:
 * runs src/dev/chaos.ts, prints the figures, exits 1 if any follow-up was lost, duplicated, undelivered or wrong, and
 * with --report rewrites the figures between `<!-- chaos:begin -->` and `<!-- chaos:end -->` in FILE.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { runChaos, type ChaosReport } from './run-chaos';

const BEGIN = '<!-- chaos:begin -->';
const END = '<!-- chaos:end -->';

function positiveInteger(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    throw new UsageError(`--${name} must be a whole number (got ${JSON.stringify(value)})`);
  return parsed;
}

class UsageError extends Error {}

/** The figures as Markdown rows: the same table goes to the terminal and to the report. */
function figures(report: ChaosReport): Array<[string, string]> {
  const failureTypes = Object.entries(report.failureTypes)
    .map(([type, n]) => `${type} ×${n}`)
    .join(', ');
  return [
    ['follow-ups', String(report.followUps)],
    ['completed with the expected outcome', String(report.completedCorrectly)],
    ['wrong outcome', String(report.wrongOutcome)],
    ['failed', report.failed === 0 ? '0' : `${report.failed} (${failureTypes})`],
    ['lost (never finished)', String(report.lost)],
    ['duplicate deliveries', String(report.duplicateDeliveries)],
    ['jobs busy with earlier work at the start', String(report.busyJobs)],
    ['messages sent while the job was still busy', String(report.sentWhileBusy)],
    ['undelivered', String(report.undelivered)],
    ['worker SIGKILLs', String(report.kills)],
    ['unexpected worker exits', String(report.unexpectedWorkerExits)],
    ['dev server restarts', String(report.serverRestarts)],
    ['client reconnects', String(report.clientReconnects)],
    ['requests dropped by the simulator', String(report.requestsDropped)],
    ['sends refused by the simulator (faults, 429)', String(report.sendsRejected)],
    ['get-job requests', String(report.getRequests)],
    ['seed', String(report.seed)],
    ['wall time', `${(report.wallTimeMs / 1000).toFixed(1)} s`],
  ];
}

function table(rows: Array<[string, string]>): string {
  return ['| figure | value |', '|---|---|', ...rows.map(([name, value]) => `| ${name} | ${value} |`)].join('\n');
}

/** Replaces only what lies between the markers, so the rest of the document stays as written. */
function rewriteReport(path: string, report: ChaosReport, command: string): void {
  const document = readFileSync(path, 'utf8');
  const begin = document.indexOf(BEGIN);
  const end = document.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${path} has no ${BEGIN} … ${END} section to rewrite`);
  const section = [
    BEGIN,
    '',
    `Run on ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores, Node ${process.version}: \`${command}\`.`,
    '',
    table(figures(report)),
    '',
    END,
  ].join('\n');
  writeFileSync(path, document.slice(0, begin) + section + document.slice(end + END.length));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      followups: { type: 'string' },
      kills: { type: 'string' },
      'restart-server': { type: 'boolean' },
      'no-restart-server': { type: 'boolean' },
      seed: { type: 'string' },
      report: { type: 'string' },
    },
    strict: true,
  });
  const options = {
    followUps: positiveInteger('followups', values.followups, 40),
    kills: positiveInteger('kills', values.kills, 8),
    restartServer: !values['no-restart-server'],
    seed: positiveInteger('seed', values.seed, 1),
  };
  console.error(
    `chaos: ${options.followUps} follow-ups, ${options.kills} worker kills, ` +
      `${options.restartServer ? 'one' : 'no'} dev server restart, seed ${options.seed}`,
  );
  const report = await runChaos({ ...options, log: (line) => console.error(`  ${line}`) });

  console.log(table(figures(report)));
  for (const record of report.records) {
    if (record.verdict === 'correct' && record.messagesAccepted === 1) continue;
    // The evidence for a finding: what the simulator counted and what the workflow did.
    console.log(`\n${record.verdict.toUpperCase()} ${record.workflowId}`);
    console.log(JSON.stringify({ ...record, history: undefined }, null, 2));
    for (const line of record.history ?? []) console.log(`  ${line}`);
  }
  if (values.report) {
    const command =
      `npm run chaos -- --followups ${options.followUps} --kills ${options.kills}` +
      `${options.restartServer ? '' : ' --no-restart-server'} --seed ${options.seed}`;
    rewriteReport(values.report, report, command);
    console.error(`chaos: figures written to ${values.report}`);
  }
  if (!report.ok) {
    console.error(
      'chaos: FAILED: a follow-up was lost, duplicated, undelivered, failed or ended with a wrong result (see above)',
    );
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error('chaos:', error instanceof UsageError ? error.message : error);
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
