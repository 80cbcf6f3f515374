/**
 * A start that answers (`start(input, { waitFor: 'sent' })`): from the call to its answer, 100 follow-ups to one idle
 * project one at a time, each to a job of its own, beside a plain `start` (which answers with a workflow id only, the
 * send still to come). The project's budget is the vendor's 100 an hour, so every one can go at once.
 */
import { startBenchStack } from './bench-stack';
import { percentile } from './stats';

export interface StartAnswerRow {
  call: 'start' | "start, waitFor: 'sent'";
  starts: number;
  p50S: number;
  p99S: number;
  maxS: number;
  /** Every answer `sent` (for the answering start), and one POST per job in the end. */
  right: boolean;
}

const POLLING = { initialInterval: '1h', maxInterval: '1h', settleWindow: '1s', timeout: '2h' } as const;

export async function runStartAnswer(options: {
  starts: number;
  log: (line: string) => void;
}): Promise<StartAnswerRow[]> {
  const rows: StartAnswerRow[] = [];
  const stack = await startBenchStack({ workMs: 3 * 3_600_000, workerEnv: {} });
  try {
    for (const call of ['start', "start, waitFor: 'sent'"] as const) {
      const projectId = call === 'start' ? 'start-plain' : 'start-answering';
      await stack.followUps.setProjectBudget(projectId, 100);
      const latencies: number[] = [];
      let right = true;
      for (let index = 0; index < options.starts; index += 1) {
        const job = { projectId, jobId: `${projectId}-${index}` };
        stack.simulator.addJob(job);
        const input = { ...job, prompt: 'Answer me', polling: POLLING };
        const calledAtMs = Date.now();
        if (call === 'start') {
          await stack.followUps.start(input);
        } else {
          const { send } = await stack.followUps.start(input, { waitFor: 'sent' });
          if (send.state !== 'sent') right = false;
        }
        latencies.push((Date.now() - calledAtMs) / 1000);
      }
      // The plain starts' sends come after their calls returned; all of them are in by now or shortly after.
      const deadline = Date.now() + 60_000;
      const posted = () =>
        Array.from(
          { length: options.starts },
          (_, index) => stack.simulator.counts(projectId, `${projectId}-${index}`).posts,
        );
      while (posted().some((posts) => posts === 0) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      if (posted().some((posts) => posts !== 1)) right = false;
      const row: StartAnswerRow = {
        call,
        starts: options.starts,
        p50S: percentile(latencies, 50),
        p99S: percentile(latencies, 99),
        maxS: Math.max(...latencies),
        right,
      };
      options.log(
        `start-answer, ${call}: p50 ${row.p50S.toFixed(3)} s, p99 ${row.p99S.toFixed(3)} s, max ${row.maxS.toFixed(3)} s, right: ${right}`,
      );
      rows.push(row);
    }
  } finally {
    await stack.stop();
  }
  return rows;
}

export function renderStartAnswer(rows: readonly StartAnswerRow[]): string[] {
  return [
    '## A start that answers',
    '',
    `From the call to its answer, ${rows[0]?.starts ?? 0} follow-ups to one idle project one at a time, each to a job of its own ` +
      "(the project's budget 100 an hour). A plain `start` answers with the workflow id; `waitFor: 'sent'` (update-with-start) " +
      'answers once the API took the message: the check-in, the read before the send and the send are inside it.',
    '',
    '| call | p50 (s) | p99 (s) | max (s) | each answered as expected, one POST per job |',
    '|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| \`${row.call}\` | ${row.p50S.toFixed(3)} | ${row.p99S.toFixed(3)} | ${row.maxS.toFixed(3)} | ${row.right ? 'yes' : 'NO'} |`,
    ),
    '',
  ];
}
