/**
 * A small chaos run on every `npm test`: the real worker process killed with SIGKILL, the dev server restarted on its
 * SQLite file, and the simulator injecting faults. The runner starts its own dev server (own port, own file) apart
 * from the run's shared one, because this one gets torn down mid-test. `npm run chaos` is the full-size version.
 */
import { runChaos, type ChaosReport } from '../../scripts/chaos/run-chaos';

// Server start, worker bundling at every restart and 40 s agent runs: minutes, not seconds, on two cores.
jest.setTimeout(400_000);

let report: ChaosReport;
beforeAll(async () => {
  report = await runChaos({
    followUps: 6,
    kills: 2,
    restartServer: true,
    seed: 1,
    // The default faults (docs/RELIABILITY.md): every kind that matters for sends and reads, at 5–10 % each.
    followUpTimeoutMs: 180_000,
  });
});

/** The evidence to read when an assertion below fails: the follow-ups concerned, with their histories. */
function evidence(concerned: (record: ChaosReport['records'][number]) => boolean): string {
  return JSON.stringify(report.records.filter(concerned), null, 2);
}

test('the chaos actually happened: worker kills and a dev server restart', () => {
  expect(report.kills).toBeGreaterThan(0);
  expect(report.serverRestarts).toBe(1);
});

test('every follow-up ends with its job’s real result despite kills, a server restart and API faults', () => {
  expect({
    lost: report.lost,
    failed: report.failed,
    wrong: report.wrongOutcome,
    evidence: evidence((r) => r.verdict !== 'correct'),
  }).toEqual({
    lost: 0,
    failed: 0,
    wrong: 0,
    evidence: '[]',
  });
  expect(report.completedCorrectly).toBe(report.followUps);
});

test('no follow-up message is delivered twice, and none is left undelivered', () => {
  expect({
    duplicates: report.duplicateDeliveries,
    undelivered: report.undelivered,
    evidence: evidence((r) => r.messagesAccepted !== 1),
  }).toEqual({
    duplicates: 0,
    undelivered: 0,
    evidence: '[]',
  });
});

test('a follow-up to a job still busy with earlier work waits through the chaos and sends only once it is idle', () => {
  expect(report.busyJobs).toBeGreaterThan(0);
  expect({
    sentWhileBusy: report.sentWhileBusy,
    evidence: evidence((r) => r.initial.status === 'active' && (r.verdict !== 'correct' || r.messagesAccepted !== 1)),
  }).toEqual({ sentWhileBusy: 0, evidence: '[]' });
});
