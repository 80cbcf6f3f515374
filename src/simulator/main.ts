/**
 * `npm run simulator -- [--port 8787] [--host 127.0.0.1] [--work-ms 3000] [--job PROJECT/JOB[=OUTCOME]]...`
 * Starts the agent API simulator and seeds the named jobs (default: demo-project/demo-job).
 * Jobs can also be added over HTTP: POST /_simulator/jobs with a SimulatedJobSpec.
 */
import { parseArgs } from 'node:util';
import { AgentApiSimulator, type SimulatedOutcome } from './simulator';

const OUTCOMES: SimulatedOutcome[] = ['completed', 'no-changes', 'failed', 'archived'];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '8787' },
      host: { type: 'string', default: '127.0.0.1' },
      'work-ms': { type: 'string', default: '3000' },
      'rate-limit': { type: 'string' },
      job: { type: 'string', multiple: true, default: ['demo-project/demo-job'] },
    },
  });
  const port = Number(values.port);
  const workMs = Number(values['work-ms']);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0-65535 (got ${values.port})`);
  if (!Number.isFinite(workMs) || workMs < 0) throw new Error(`--work-ms must be a number of milliseconds`);
  const simulator = await AgentApiSimulator.start({
    host: values.host,
    port,
    defaultWorkMs: workMs,
    sendsPerProjectPerHour: values['rate-limit'] ? Number(values['rate-limit']) : undefined,
  });
  for (const spec of values.job) {
    const match = /^([^/=]+)\/([^=]+)(?:=(.+))?$/.exec(spec);
    const outcome = (match?.[3] ?? 'completed') as SimulatedOutcome;
    if (!match?.[1] || !match[2] || !OUTCOMES.includes(outcome)) {
      throw new Error(`--job must be PROJECT/JOB or PROJECT/JOB=OUTCOME with OUTCOME one of ${OUTCOMES.join(', ')} (got ${spec})`);
    }
    simulator.addJob({ projectId: match[1], jobId: match[2], outcome });
    console.log(`seeded job ${match[1]}/${match[2]} (next follow-up ends ${outcome})`);
  }
  console.log(`agent API simulator on ${simulator.baseUrl}; any key of the form mint_<8+ characters> is accepted`);
  const stop = () => {
    void simulator.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error('simulator:', error instanceof Error ? error.message : error);
  process.exitCode = 2;
});
