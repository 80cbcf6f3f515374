/**
 * projectCoordinatorWorkflow: one project's send budget and its jobs' lanes, in one workflow per project (a "virtual
 * object"). Follow-ups check in by update-with-start; the coordinator hands each job to one follow-up at a time, in the
 * order the follow-ups were started, and grants send slots so that at most N sends leave in any rolling window, all at
 * once while the window has room (the way the vendor counts "100 uses per project per hour"). What a check-in can
 * have at once rides on its answer; the rest goes out as signals in bounded rounds. The decisions are pure functions
 * in project-coordination.ts; every message is checked by coordinator-messages.ts.
 *
 * It is keyed by project only, so every worker, task queue and service on the namespace shares it. It outlives worker
 * and server restarts like any workflow, keeps its history bounded with continue-as-new (its update validator refuses
 * check-ins, without writing history, once a run has taken what it keeps), and ends only when nothing is left to
 * keep: no lane, no request, no send still in its window and no budget of its own.
 */
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { coordinatorWorkflowId } from '../kernel/workflow-ids';
import { formatMs } from '../kernel/duration';
import { checkEnterRequest, checkLeave, checkSlotOutcome, checkSetBudget } from './coordinator-messages';
import { defaultLimitFrom, perWindow } from './budget-source';
import {
  awaitedToCheck,
  emptyCoordinator,
  enter,
  forgetAwaited,
  grantAtCheckIn,
  holdersToCheck,
  HOUR_MS,
  isConfirmed,
  isCoordinatorState,
  isIdle,
  leave,
  limitOf,
  markAwaitedChecked,
  markChecked,
  nextAwaitedCheckAtMs,
  nextHolderCheckAtMs,
  noticeAtCheckIn,
  returnSlot,
  planRound,
  sendAnswered,
  standingOf,
  viewOf,
  windowEmptiesAtMs,
  type CheckInAnswer,
  type CoordinatorState,
  type EnterRequest,
  type ProjectView,
  type QueueNotice,
  type TurnGrant,
} from './project-coordination';
import { identifierProblem } from '../kernel/request';
import { CHECK_IN_REFUSED, COORDINATOR_BUSY, FollowUpErrorType } from '../kernel/types';
import {
  enterUpdate,
  leaveSignal,
  projectQuery,
  slotOutcomeSignal,
  setBudgetSignal,
  type CoordinatorStart,
  standingSignal,
} from './messages';
import { refusalLine } from '../kernel/words';
import { NotedGrowth } from '../workflows/noted-growth';
import { type FollowUpActivities, type FollowUpConfirmation } from '../workflows/activity-contract';

/** Signals a run takes before it continues as new, far below Temporal's 10,000 per run. */
const SIGNALS_PER_RUN = 4_000;
/** Check-ins (updates) a run takes before it refuses more and continues as new, below Temporal's 2,000 per run. */
const CHECK_INS_PER_RUN = 1_000;
/**
 * Follow-ups a coordinator keeps in its lanes and queue at once: its state goes whole through continue-as-new, whose
 * input the server caps at 2 MB. Check-ins past it are refused and tried again later by their senders.
 */
const MAX_FOLLOW_UPS_KEPT = 3_000;
/** Events a run grows to before it continues as new, far below Temporal's 51,200 (a server may suggest it sooner). */
const EVENTS_PER_RUN = 10_000;
/**
 * Grants and notices signalled per round (two events each). A burst is told in rounds, with a chance to continue as
 * new between them, so no burst can grow one run past the server's history limit: a coordinator the server
 * terminated would strand every follow-up waiting on it until it checks in again.
 */
const MESSAGES_PER_ROUND = 50;

const { confirmFollowUp: confirmStillRunning } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
  summary: 'check that a follow-up holding or awaited in a lane still runs',
});

/** Whether a follow-up holding a job, or awaited in its lane, still runs: a describe, retried until it answers. */
async function followUpIsRunning(workflowId: string): Promise<boolean> {
  return (await confirmStillRunning({ workflowId, ticket: null })).problem === null;
}

/**
 * A check-in's describe: short and few attempts, since its sender waits (and holds one of Temporal's 10 updates in
 * flight); past them the check-in is refused for now and its sender checks in again.
 */
const { confirmFollowUp } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', maximumInterval: '2s', maximumAttempts: 3 },
  summary: 'confirm that a follow-up checking in runs, and read the default budget',
});

/** Coordinates one project's follow-ups: its send budget and one lane per job. */
export async function projectCoordinatorWorkflow(
  start: CoordinatorStart,
  ...continued: unknown[]
): Promise<ProjectView> {
  const coordinator = new ProjectCoordinator(admit(start, continued));
  setHandler(enterUpdate, (request) => coordinator.checkIn(request), {
    // Runs before anything is written: a refused check-in leaves no trace, and its sender tries again.
    validator: (request) => coordinator.checkCheckIn(request),
  });
  setHandler(leaveSignal, (message) => coordinator.onLeave(message));
  setHandler(slotOutcomeSignal, (message) => coordinator.onSlotOutcome(message));
  setHandler(setBudgetSignal, (message) => coordinator.onSetBudget(message));
  setHandler(projectQuery, () => viewOf(coordinator.state, Date.now()));
  return coordinator.run(start);
}

/**
 * A coordinator's run: the state its decisions act on (project-coordination.ts), what it heard since its last round,
 * and the check-ins being confirmed. The handlers above go one line each into it; `run` is the loop.
 */
class ProjectCoordinator {
  /** Something changed since the last round began: plan another before waiting. */
  private changed = true;
  private signals = 0;
  private checkIns = 0;
  private readonly growth = new NotedGrowth();
  /** Describes in flight, one per claimed run: a retried check-in waits for the same answer, not a second describe. */
  private readonly confirming = new Map<string, Promise<FollowUpConfirmation>>();
  private beingConfirmed = 0;

  constructor(readonly state: CoordinatorState) {}

  /**
   * Read in conditions and validators, so only from what the history holds (noted-growth.ts): a validator that read
   * the live figures would refuse every check-in while the loop waits for a change the refusals keep from coming.
   */
  private closing(): boolean {
    return this.growth.reached(EVENTS_PER_RUN) || this.signals >= SIGNALS_PER_RUN || this.checkIns >= CHECK_INS_PER_RUN;
  }

  private heard(): void {
    this.signals += 1;
    this.changed = true;
    this.growth.note();
  }

  async checkIn(raw: EnterRequest): Promise<CheckInAnswer> {
    this.checkIns += 1;
    this.changed = true;
    this.growth.note();
    // The validator checked the shape; what it carries beyond the known fields (a `defaultLimit`) goes here.
    const request = checkEnterRequest(raw);
    if (typeof request === 'string') throw refusedCheckIn(request);
    // Only a follow-up the server shows running, ours, of the chain the ticket names, takes a place or a slot;
    // confirmed once per run (its lane entry then stands for it), so its later check-ins cost no describe.
    if (!isConfirmed(this.state, request)) await this.confirm(request);
    this.changed = true;
    const now = Date.now();
    enter(this.state, request, now);
    grantAtCheckIn(this.state, request.workflowId, request.jobId, now);
    return {
      standing: standingOf(this.state, request.workflowId, request.slotFor),
      notice: noticeAtCheckIn(this.state, request.workflowId, request.jobId, now),
    };
  }

  /** Confirms the follow-up checking in by a describe (shared by its retried check-ins), or refuses the check-in. */
  private async confirm(request: EnterRequest): Promise<void> {
    const key = `${request.workflowId}\u0000${request.ticket}`;
    let pending = this.confirming.get(key);
    if (!pending) {
      pending = confirmFollowUp({ workflowId: request.workflowId, ticket: request.ticket });
      this.confirming.set(key, pending);
    }
    let confirmation: FollowUpConfirmation;
    this.beingConfirmed += 1;
    try {
      confirmation = await pending;
    } catch {
      throw ApplicationFailure.create({
        type: COORDINATOR_BUSY,
        message: 'The coordinator could not confirm the follow-up checking in yet; check in again shortly',
      });
    } finally {
      this.confirming.delete(key);
      this.beingConfirmed -= 1;
      // The loop may be waiting for this answer, to take the follow-up or to end idle.
      this.changed = true;
    }
    const defaultLimit = defaultLimitFrom(confirmation.defaultSendsPerHour, this.state.windowMs);
    if (defaultLimit !== null) this.state.defaultLimit = defaultLimit;
    if (confirmation.unsealed) {
      log.warn('Refused a check-in whose ticket this worker would not seal', {
        projectId: this.state.projectId,
        workflowId: request.workflowId,
      });
      // For now only: a true follow-up whose worker holds another API key (one being rotated) checks in again.
      throw ApplicationFailure.create({
        type: COORDINATOR_BUSY,
        message:
          `Refused for now: ${confirmation.problem}; either the check-in is forged, or the workers hold different ` +
          'AGENT_API_KEY values (while a key is rotated); check in again',
      });
    }
    if (confirmation.problem !== null) {
      log.warn('Refused a check-in from no running follow-up of ours', {
        projectId: this.state.projectId,
        workflowId: request.workflowId,
        problem: confirmation.problem,
      });
      throw refusedCheckIn(`${confirmation.problem}; only a running follow-up checks in for itself`);
    }
  }

  checkCheckIn(request: unknown): void {
    const checked = checkEnterRequest(request);
    if (typeof checked === 'string') throw refusedCheckIn(checked);
    if (this.closing())
      throw ApplicationFailure.create({
        type: COORDINATOR_BUSY,
        message: 'The coordinator is continuing as new; check in again shortly',
      });
    if (followUpsKept(this.state) >= MAX_FOLLOW_UPS_KEPT && !knows(this.state, checked.workflowId)) {
      throw ApplicationFailure.create({
        type: COORDINATOR_BUSY,
        message: `The coordinator keeps ${MAX_FOLLOW_UPS_KEPT} follow-ups already; check in again later`,
      });
    }
  }

  onLeave(message: unknown): void {
    const { state } = this;
    const checked = checkLeave(message);
    if (!checked) return void log.warn('Ignored a leave signal without a ticket', { projectId: state.projectId });
    // Only the run that checked in with this ticket leaves; a wrong one changes nothing.
    if (leave(state, checked.workflowId, checked.ticket) === 'unknown')
      log.warn('Ignored a leave signal of no follow-up held here by its ticket', { projectId: state.projectId });
    this.heard();
  }

  onSlotOutcome(message: unknown): void {
    const { state } = this;
    const checked = checkSlotOutcome(message);
    if (!checked) return void log.warn('Ignored a malformed slotOutcome signal', { projectId: state.projectId });
    if (checked.outcome === 'unsent') {
      returnSlot(state, checked.workflowId, checked.ticket, checked.slot);
      return void this.heard();
    }
    const refused = checked.outcome === 'refused';
    const refusedBefore = state.refusal?.sinceMs;
    // A slot this coordinator does not hold (stale, or not this project's) changes nothing.
    const { workflowId, ticket, slot, retryAfterMs } = checked;
    const answer = { workflowId, ticket, slot, refused, retryAfterMs };
    if (!sendAnswered(state, answer, Date.now())) return void this.heard();
    if (refused && refusedBefore === undefined)
      log.warn("The agent API refused a send (429): the project's sends pause until a probe is accepted", {
        projectId: state.projectId,
        nextProbeAt: state.refusal ? new Date(state.refusal.probeAtMs).toISOString() : null,
      });
    if (refusedBefore !== undefined && !state.refusal)
      log.info('The agent API took the probe: the project sends again', { projectId: state.projectId });
    // Said at once: the main loop may be busy telling a burst its grants.
    if (state.refusal?.sinceMs !== refusedBefore) setCurrentDetails(describe(state));
    this.heard();
  }

  onSetBudget(message: unknown): void {
    const { state } = this;
    const checked = checkSetBudget(message);
    if (typeof checked === 'string')
      return void log.warn('Ignored a setBudget signal', { projectId: state.projectId, problem: checked });
    state.limitOverride = checked.sendsPerHour === null ? null : perWindow(checked.sendsPerHour, state.windowMs);
    this.heard();
  }

  /**
   * Rounds until idle: tell a bounded round of grants and notices, check on holders and awaited follow-ups, continue
   * as new when the run has taken what it keeps, then wait for a change or the next time something falls due.
   */
  async run(start: CoordinatorStart): Promise<ProjectView> {
    const { state } = this;
    for (;;) {
      this.changed = false;
      this.growth.note();
      const { grants, notices, wakeAtMs, more } = planRound(state, Date.now(), MESSAGES_PER_ROUND);
      await tell(state, grants, notices);
      await checkHolders(state);
      await checkAwaited(state);
      setCurrentDetails(describe(state));
      if (this.closing()) {
        await condition(allHandlersFinished);
        await continueAsNew<typeof projectCoordinatorWorkflow>(start, { ...state, runs: state.runs + 1 });
      }
      if (this.changed || more) continue;
      // A check-in being confirmed is not idleness: its follow-up may be about to take a place.
      if (isIdle(state, Date.now()) && this.beingConfirmed === 0) return viewOf(state, Date.now());
      const wakes = [wakeAtMs, nextHolderCheckAtMs(state), nextAwaitedCheckAtMs(state), windowEmptiesAtMs(state)];
      const due = wakes.filter((time): time is number => time !== null);
      const wakeIn = due.length > 0 ? Math.max(Math.min(...due) - Date.now(), 1_000) : undefined;
      // A run that starts refusing check-ins (the server suggests continue-as-new) must not wait for a change that the
      // refusals keep from coming: it wakes and continues as new.
      if (wakeIn === undefined) await condition(() => this.changed || this.closing());
      else await condition(() => this.changed || this.closing(), wakeIn, { summary: wakeSummary(state, wakeAtMs) });
    }
  }
}

function refusedCheckIn(problem: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: CHECK_IN_REFUSED,
    message: `Invalid check-in: ${problem}`,
    nonRetryable: true,
  });
}

/** Signals the grants and notices at once; a follow-up that cannot be reached is gone, and loses its place. */
async function tell(
  state: CoordinatorState,
  grants: TurnGrant[],
  notices: Array<{ workflowId: string; ticket: string; notice: QueueNotice }>,
): Promise<void> {
  const sends = [
    ...grants.map((grant) => ({
      workflowId: grant.workflowId,
      send: () =>
        getExternalWorkflowHandle(grant.workflowId).signal(standingSignal, {
          ticket: grant.ticket,
          standing: grant,
          notice: null,
        }),
    })),
    ...notices.map(({ workflowId, ticket, notice }) => ({
      workflowId,
      send: () => getExternalWorkflowHandle(workflowId).signal(standingSignal, { ticket, standing: null, notice }),
    })),
  ];
  const gone = await Promise.all(
    sends.map(async ({ workflowId, send }) => {
      try {
        await send();
        return null;
      } catch (error) {
        // A slot granted to it still counts: the follow-up may have learned of the grant from a check-in's answer
        // (which repeats a standing grant), sent under it and ended before this signal arrived. Only the follow-up
        // knows that no request left under a slot (`slotOutcome` unsent).
        log.info('A follow-up is gone; dropping it', {
          projectId: state.projectId,
          workflowId,
          reason: error instanceof Error ? error.message : String(error),
        });
        return workflowId;
      }
    }),
  );
  for (const workflowId of new Set(gone)) if (workflowId !== null) leave(state, workflowId);
}

/** Frees the jobs of holders that no longer run (terminated, or reset without leaving). */
async function checkHolders(state: CoordinatorState): Promise<void> {
  const due = holdersToCheck(state, Date.now());
  if (due.length === 0) return;
  const running = await Promise.all(due.map((workflowId) => followUpIsRunning(workflowId)));
  due.forEach((workflowId, index) => {
    markChecked(state, workflowId, Date.now());
    if (!running[index]) {
      log.warn('The follow-up holding a job is no longer running; the next one may go', {
        projectId: state.projectId,
        holder: workflowId,
      });
      leave(state, workflowId);
    }
  });
}

/**
 * Follow-ups started before a lane's first waiter that never checked in: one that no longer runs is forgotten, so the
 * lane goes on; one that runs is waited for (it has yet to check in, or held the job before the coordinator was reset).
 */
async function checkAwaited(state: CoordinatorState): Promise<void> {
  const due = awaitedToCheck(state, Date.now());
  if (due.length === 0) return;
  const running = await Promise.all(due.map((workflowId) => followUpIsRunning(workflowId)));
  due.forEach((workflowId, index) => {
    if (running[index]) markAwaitedChecked(state, workflowId, Date.now());
    else forgetAwaited(state, workflowId);
  });
}

/** How many follow-ups the state holds: its lanes' holders and waiters (slot requests are holders'). */
function followUpsKept(state: CoordinatorState): number {
  return Object.values(state.lanes).reduce((sum, lane) => sum + lane.waiting.length + (lane.holder ? 1 : 0), 0);
}

function knows(state: CoordinatorState, workflowId: string): boolean {
  return Object.values(state.lanes).some(
    (lane) => lane.holder?.workflowId === workflowId || lane.waiting.some((entry) => entry.workflowId === workflowId),
  );
}

function wakeSummary(state: CoordinatorState, wakeAtMs: number | null): string {
  if (state.refusal && state.slotRequests.length > 0)
    return `next probe send of project ${state.projectId} after a 429`;
  if (state.slotRequests.length > 0 && wakeAtMs !== null) return `next send slot of project ${state.projectId}`;
  if (Object.keys(state.lanes).length > 0) return 'check on the follow-ups holding jobs';
  return `keep the send window until its last send leaves it`;
}

/** The Web UI shows this in a short fixed-height panel: the budget and who waits for it first, what it is last. */
function describe(state: CoordinatorState): string {
  const now = Date.now();
  const view = viewOf(state, now);
  const windowName = state.windowMs === HOUR_MS ? 'hour' : formatMs(state.windowMs);
  const waiting = view.waitingForBudget.length;
  const lines = [
    ...(view.refusal ? [`**${refusalLine(state.projectId, view.refusal, now)}**`, ''] : []),
    `**Project \`${state.projectId}\`**: ${view.sentInWindow} of ${limitOf(state)} sends used in the last ${windowName}` +
      (view.nextSlotAt ? `; next slot ${view.nextSlotAt}` : '') +
      ` (${state.limitOverride === null ? "the workers' default" : 'set for this project'})` +
      (waiting > 0 && view.refusal
        ? `; **${waiting} follow-up${waiting === 1 ? '' : 's'} waiting for the probe to be accepted** (others used ` +
          "the project's hour too; a larger budget would not help)."
        : waiting > 0
          ? `; **${waiting} follow-up${waiting === 1 ? '' : 's'} waiting for the budget** (to send sooner: ` +
            `\`agent-followup budget set --project ${state.projectId} --sends-per-hour N\`, at most the vendor's 100).`
          : '; no follow-up waiting for the budget.'),
    '',
    `- Jobs with a follow-up: ${view.lanes.length} (${view.lanes.reduce((sum, lane) => sum + lane.waiting.length, 0)} waiting behind another)`,
    '- Serves every follow-up to this project: one at a time per job, in start order, within the budget',
    '- Ends by itself; do not terminate it (a new one would start with an empty window)',
    `- Over its life: ${state.totals.granted} sends granted, ${state.totals.served} follow-ups served`,
  ];
  return lines.join('\n');
}

function admit(start: CoordinatorStart, continued: unknown[]): CoordinatorState {
  const problems = [identifierProblem('projectId', start?.projectId)].filter(
    (problem): problem is string => problem !== undefined,
  );
  if (typeof start?.sendsPerHour !== 'number' || !(start.sendsPerHour >= 1))
    problems.push('sendsPerHour must be a number of at least 1');
  const windowMs = start?.windowMs ?? HOUR_MS;
  if (typeof windowMs !== 'number' || !(windowMs >= 1_000)) problems.push('windowMs must be at least 1000');
  const atOnce = start?.sendsAtOnce;
  if (atOnce !== undefined && !(Number.isSafeInteger(atOnce) && atOnce >= 1))
    problems.push('sendsAtOnce must be a whole number of at least 1');
  if (problems.length === 0 && workflowInfo().workflowId !== coordinatorWorkflowId(start.projectId)) {
    // Only the coordinator's own id may hold it: never a follow-up's, never another project's.
    problems.push(`a project coordinator runs only under the id '${coordinatorWorkflowId(start.projectId)}'`);
  }
  const carried = continued[0];
  if (
    continued.length > 1 ||
    (continued.length === 1 &&
      (workflowInfo().continuedFromExecutionRunId === undefined || !isCoordinatorState(carried)))
  ) {
    problems.push('the coordinator takes one argument, { projectId, sendsPerHour }');
  }
  if (problems.length > 0) {
    throw ApplicationFailure.create({
      type: FollowUpErrorType.InvalidInput,
      message: `Invalid project coordinator input: ${problems.join('; ')}`,
      nonRetryable: true,
    });
  }
  if (isCoordinatorState(carried)) return carried;
  const state = emptyCoordinator(start.projectId, perWindow(start.sendsPerHour, windowMs), windowMs);
  if (atOnce !== undefined) state.sendsAtOnce = atOnce;
  return state;
}
