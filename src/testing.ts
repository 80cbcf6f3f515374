/**
 * `agent-followup/testing`: the agent API simulator for your own tests, the same one this project's tests, demo and
 * compose stack use. It speaks the vendor's API over real HTTP on loopback: script jobs (how long the agent works,
 * how the job ends, its pull request) and faults (status codes, latency, dropped connections, 429s), then read what
 * it saw. Point a worker's AgentApiClient at `url`; any admin key of the documented form (`mint_` and 8+ characters)
 * is accepted unless `apiKey` asks for one exact key. As strict as the vendor unless an option says otherwise: 100
 * sends per project per rolling hour, no `Idempotency-Key` honoured, the non-admin key kinds refused.
 */
import { AgentApiSimulator, type SimulatedRequest, type SimulatorOptions } from './simulator/simulator';

export { AgentApiSimulator, type JobCounts, type SimulatedRequest, type SimulatorOptions, type SimulatorStats } from './simulator/simulator';
export type { FaultRule, SimulatedFault, SimulatedJobSpec, SimulatedOutcome } from './simulator/simulator';

export interface TestAgentApi extends AgentApiSimulator {
  /** `http://127.0.0.1:<port>`: the base URL for AgentApiClient. */
  readonly url: string;
  /** Every request it answered, in order (operation, project, job, time). */
  readonly requests: SimulatedRequest[];
}

/** Starts a simulator on a free loopback port; `await api.close()` when done. */
export async function startAgentApiSimulator(options: SimulatorOptions = {}): Promise<TestAgentApi> {
  const requests: SimulatedRequest[] = [];
  const simulator = await AgentApiSimulator.start({
    ...options,
    onRequest: (request) => {
      requests.push(request);
      options.onRequest?.(request);
    },
  });
  return Object.assign(simulator, { url: simulator.baseUrl, requests });
}
