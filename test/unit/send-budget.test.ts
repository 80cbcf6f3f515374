import { checkSendBudget, configureSendBudget, type TaskQueueConfigService } from '../../src/send-budget';

/** A task queue config service that keeps what it is told, as the server does. */
function fakeService(options: { refuseWith?: number } = {}): TaskQueueConfigService & { updates: unknown[] } {
  let rps: number | undefined;
  const updates: unknown[] = [];
  return {
    updates,
    async updateTaskQueueConfig(request) {
      updates.push(request);
      rps = request.updateFairnessKeyRateLimitDefault?.rateLimit?.requestsPerSecond ?? undefined;
      return {};
    },
    async describeTaskQueue() {
      if (options.refuseWith !== undefined) throw Object.assign(new Error('permission denied'), { code: options.refuseWith });
      return { config: rps === undefined ? {} : { fairnessKeysRateLimitDefault: { rateLimit: { requestsPerSecond: rps } }, fairnessWeightOverrides: {} } };
    },
  };
}

const where = { namespace: 'ns', taskQueue: 'agent-followup' };

describe('the per-project send budget on the sends queue', () => {
  test('is set as a per-fairness-key rate limit, in requests per second, on the sends queue', async () => {
    const service = fakeService();
    await configureSendBudget(service, where, { sendsPerProjectPerHour: 90, weights: { big: 2 } });
    expect(service.updates).toEqual([
      expect.objectContaining({
        namespace: 'ns',
        taskQueue: 'agent-followup-sends',
        updateFairnessKeyRateLimitDefault: expect.objectContaining({ rateLimit: { requestsPerSecond: 0.025 } }),
        setFairnessWeightOverrides: { big: 2 },
      }),
    ]);
  });

  test('the check passes on the budget the worker expects', async () => {
    const service = fakeService();
    await configureSendBudget(service, where, { sendsPerProjectPerHour: 80, weights: {} });
    expect(await checkSendBudget(service, where, 80)).toMatchObject({ ok: true, budget: { sendsPerProjectPerHour: 80 } });
  });

  test('the check says what is missing and gives the command that sets it', async () => {
    const check = await checkSendBudget(fakeService(), where, 80);
    expect(check.ok).toBe(false);
    expect((check as { problem: string }).problem).toContain("the sends queue 'agent-followup-sends' has no per-project send budget");
    expect((check as { problem: string }).problem).toContain('--fairness-key-rps-limit-default 0.022222222222222223');
  });

  test('the check names both numbers when they differ', async () => {
    const service = fakeService();
    await configureSendBudget(service, where, { sendsPerProjectPerHour: 40, weights: {} });
    expect((await checkSendBudget(service, where, 80)) as { problem: string }).toMatchObject({
      ok: false,
      problem: expect.stringContaining('allows 40 sends per project per hour, not the 80 of AGENT_SENDS_PER_PROJECT_PER_HOUR'),
    });
  });

  test('a key that may not read the queue gets a warning, not a refusal', async () => {
    expect(await checkSendBudget(fakeService({ refuseWith: 7 }), where, 80)).toMatchObject({ ok: 'unknown' });
  });
});
