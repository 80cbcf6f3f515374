/**
 * For tests of one activity in the SDK's MockActivityEnvironment: the agent API simulator on loopback and a real HTTP
 * client of it, started before the file's tests and closed after them.
 */
import { AgentApiClient } from '../../src/agent-api/http-client';
import { AgentApiSimulator } from '../../src/simulator/simulator';

export interface LoopbackApi {
  simulator: AgentApiSimulator;
  api: AgentApiClient;
}

/** Call at a test file's top level; the fields are set once its tests run. Jobs work 60 s unless a test says otherwise. */
export function loopbackApi(apiKey: string): LoopbackApi {
  const loopback = {} as LoopbackApi;
  beforeAll(async () => {
    loopback.simulator = await AgentApiSimulator.start({ apiKey, defaultWorkMs: 60_000 });
    loopback.api = new AgentApiClient({ baseUrl: loopback.simulator.baseUrl, apiKey, requestTimeoutMs: 2_000 });
  });
  afterAll(async () => {
    await loopback.simulator?.close();
  });
  return loopback;
}
