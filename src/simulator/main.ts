/**
 * `npm run simulator -- [flags]`: the agent API simulator on its own, for the demo, docker compose and chaos runs.
 *
 *   --port N (default 8787)   --host HOST (default 127.0.0.1)   --work-ms N (default 3000)   --rate-limit N
 *   --job PROJECT/JOB[=OUTCOME]            repeatable; seeds jobs (default demo-project/demo-job)
 *   --fault OPERATION:KIND[:RATE[:PARAM]]  repeatable; a global fault rule, e.g. get:status:0.2:503,
 *                                          any:latency:0.1:2000, send:drop-after-processing:0.3
 *   --seed N                               seed of the fault-rate generator, so a chaos run can be repeated
 *   --honour-idempotency-key               answer a repeated Idempotency-Key from its first send (the vendor does not)
 *   --help
 *
 * Bad flags exit with code 2 and every problem listed. Jobs and rules can also be changed over HTTP:
 * POST /_simulator/jobs (a SimulatedJobSpec), POST /_simulator/faults (FaultRule[]),
 * POST /_simulator/jobs/{project}/{job}/fault-rules (FaultRule[]), POST /_simulator/projects/{project}/outside-uses
 * ({ count }), GET /_simulator/stats.
 */
import { AgentApiSimulator } from './simulator';
import { SIMULATOR_USAGE, UsageError, parseSimulatorArgs } from './simulator-args';

async function main(): Promise<void> {
  const args = parseSimulatorArgs(process.argv.slice(2));
  if (args.help) {
    console.log(SIMULATOR_USAGE);
    return;
  }
  const simulator = await AgentApiSimulator.start({
    host: args.host,
    port: args.port,
    defaultWorkMs: args.workMs,
    sendsPerProjectPerHour: args.sendsPerProjectPerHour,
    seed: args.seed,
    honourIdempotencyKey: args.honourIdempotencyKey,
  });
  simulator.setGlobalFaults(args.faults);
  for (const job of args.jobs) {
    simulator.addJob(job);
    console.log(`seeded job ${job.projectId}/${job.jobId} (next follow-up ends ${job.outcome})`);
  }
  for (const rule of args.faults) console.log(`fault rule: ${JSON.stringify(rule)}`);
  if (args.honourIdempotencyKey)
    console.log(
      'A repeated Idempotency-Key is answered from its first send (--honour-idempotency-key; the vendor does not)',
    );
  console.log(`agent API simulator on ${simulator.baseUrl}; any key of the form mint_<8+ characters> is accepted`);
  const stop = () => {
    void simulator.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`simulator: ${error.message}\n\n${SIMULATOR_USAGE}`);
    process.exitCode = 2;
    return;
  }
  console.error('simulator:', error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
