/**
 * The simplest alternative a user would write, as the vendor's docs show it: send the message, then a fixed-interval
 * `while (true)` that reads the job and stops on `completed` or `failed` (it never stops on `archived`). In process
 * for the scale runs; as a child process (`node dist/scripts/bench/vendor-loop.js`) when its CPU and memory are
 * measured: it then reads its settings (JSON) from stdin and runs one loop per job until `durationMs`.
 */
import { readFileSync } from 'node:fs';

export interface VendorLoopOptions {
  baseUrl: string;
  apiKey: string;
  projectId: string;
  jobId: string;
  prompt: string;
  intervalMs: number;
  /** Ends the loop from outside (the vendor's own loop would run forever on an archived job). */
  signal?: AbortSignal;
}

export interface VendorLoopOutcome {
  status: string | null;
  gets: number;
  posts: number;
  /** When the loop saw a status it stops on (epoch ms), or null if it was stopped first. */
  noticedAtMs: number | null;
}

export async function vendorFollowUp(options: VendorLoopOptions): Promise<VendorLoopOutcome> {
  const jobUrl = `${options.baseUrl}/v2/agent/${encodeURIComponent(options.projectId)}/job/${encodeURIComponent(options.jobId)}`;
  const headers = { Authorization: `Bearer ${options.apiKey}`, 'Content-Type': 'application/json' };
  // Sent until the API answers: a loop that lost its send to a refused connection would measure nothing.
  for (;;) {
    try {
      await fetch(`${jobUrl}/message`, { method: 'POST', headers, body: JSON.stringify({ prompt: options.prompt }) });
      break;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
  let gets = 0;
  let status: string | null = null;
  while (!options.signal?.aborted) {
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs));
    if (options.signal?.aborted) break;
    gets += 1;
    try {
      const job = (await (await fetch(jobUrl, { headers })).json()) as { status?: string };
      status = job.status ?? null;
      if (status === 'completed' || status === 'failed') return { status, gets, posts: 1, noticedAtMs: Date.now() };
    } catch {
      // the vendor's loop just tries again next time
    }
  }
  return { status, gets, posts: 1, noticedAtMs: null };
}

interface ChildConfig {
  baseUrl: string;
  apiKey: string;
  projectId: string;
  jobIds: string[];
  intervalMs: number;
  durationMs: number;
}

async function runAsChild(): Promise<void> {
  const config = JSON.parse(readFileSync(0, 'utf8')) as ChildConfig;
  const stop = new AbortController();
  setTimeout(() => stop.abort(), config.durationMs).unref();
  console.log('vendor loops running');
  await Promise.all(
    config.jobIds.map((jobId) =>
      vendorFollowUp({ ...config, jobId, prompt: 'Vendor loop follow-up', signal: stop.signal }),
    ),
  );
}

if (require.main === module) {
  runAsChild().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
