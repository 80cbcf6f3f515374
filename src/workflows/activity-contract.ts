/**
 * What our workflows ask of the world, as they see it: every activity's name, what it takes and what it answers.
 * src/activities/ implements this contract (createActivities is typed by it), so workflow code knows the activities
 * by their types alone and no workflow imports the activities' code or its folder.
 */
import type { MessageRequest, SendResult } from '../agent-api/http-client';
import type { AgentJob, JobRef, JobState } from '../kernel/agent-job';
import type { PollSchedule, WaitRequest } from '../kernel/poll-schedule';
import type { DeliveryRecord, NotificationDelivered, NotificationDelivery } from '../kernel/types';
import type { WatchRegistration } from '../watch/messages';
import type { WatchedWait } from '../watch/reader-book';
import type { QueueNotice, TurnGrant } from '../coordinator/project-coordination';

export interface FollowUpActivities {
  /** One send of the follow-up message, under a slot of the project's budget (one attempt; the workflow decides more). */
  sendFollowUpMessage(request: SendRequest): Promise<SentMessage>;
  /** Reads the job on the wait's schedule until a read answers the wait. */
  pollAgentJob(request: PollRequest): Promise<PollResult>;
  /** The reads that settle a send whose outcome is open, all in one attempt. */
  readSendOutcome(request: SendOutcomeRequest): Promise<SendOutcomeReads>;
  /** Checks in with the project's coordinator (update-with-start): the job's lane, a send slot, earlier runs. */
  checkIn(request: CheckInRequest): Promise<CheckedIn>;
  /**
   * For a coordinator: whether the follow-up a check-in names runs, is ours and is the chain its ticket names (what
   * Temporal recorded, not what the message says), and the workers' default budget; once per follow-up run, and again
   * (without a ticket: any chain) for a holder or an awaited follow-up that fell silent.
   */
  confirmFollowUp(claim: FollowUpClaim): Promise<FollowUpConfirmation>;
  /** The watcher's reader: reads the watched jobs on their schedules for as long as the watcher runs. */
  watchJobs(request: WatchJobsRequest): Promise<void>;
  /** One turn of a watcher that reads by its own timers (a small book): reads the waits due, tells their follow-ups. */
  readWatchedJobs(request: ReadWatchedJobsRequest): Promise<ReadWatchedJobsResult>;
  /** For a watcher started afresh: the waits of the run before it under its id, if that run was terminated. */
  adoptBook(request: AdoptBookRequest): Promise<WatchRegistration[]>;
  /** Registers a wait with its shard's watcher, starting the watcher if need be. */
  registerWatch(request: { watcherId: string; registration: WatchRegistration }): Promise<void>;
  /**
   * One signed POST of a follow-up's callback, once the callback's parent (as Temporal recorded it) is found to be our
   * follow-up and to have recorded the ending the notification reports.
   */
  deliverNotification(
    delivery: NotificationDelivery,
    parent: { workflowId: string; runId: string },
  ): Promise<NotificationDelivered>;
}

/** Who a check-in says it comes from: a follow-up's workflow id and its sealed ticket (ticket-seal.activity.ts). */
export interface FollowUpClaim {
  workflowId: string;
  /** Null: any running follow-up under the id will do. */
  ticket: string | null;
}

export interface FollowUpConfirmation {
  /** Why the claim is not a running follow-up of that chain (null: it is). */
  problem: string | null;
  /**
   * The problem is only the ticket's seal: not one this worker would make. Forged, or sealed by a worker with another
   * AGENT_API_KEY (a key being rotated): refused for now, so a true follow-up checks in again.
   */
  unsealed?: true;
  /**
   * The default budget per project as this worker has it: the namespace's (`budget set` without `--project`) or its
   * own AGENT_SENDS_PER_PROJECT_PER_HOUR, per hour (tests' short windows scale it in the coordinator).
   */
  defaultSendsPerHour: number;
}

/** A send under a slot of the project's budget: the request may leave only before `sendByMs`. */
export interface SendRequest extends MessageRequest {
  sendByMs: number;
  /** With shared watching: the follow-up's first wait, registered with its watcher as soon as the message is taken. */
  watch?: FirstWait;
  /**
   * The coordinator awaits the API's answer to this send (the slot's grant said `tellAnswer`): a 2xx is told from
   * here, which saves the follow-up a signal and a workflow task; any other answer the follow-up tells itself.
   */
  tellAccepted?: AcceptedSlot;
}

/** A send slot whose accepted send the activity tells the project's coordinator of (`slotOutcome`). */
export interface AcceptedSlot {
  coordinatorId: string;
  slot: string;
  /** The follow-up's sealed ticket: the coordinator believes an answer only under the ticket the slot was granted to. */
  ticket: string;
}

/**
 * The first wait after a send, as the follow-up would register it: what it knows is the send's answer (or, without a
 * job in it, the job before), a terminal read unchanged from that answers after the settle window, and the schedule
 * starts with the answer. Registered here it costs the follow-up no signal and no workflow task of its own.
 */
export interface FirstWait {
  watcherId: string;
  /** The job before the send. */
  baseline: JobState;
  settleWindowMs: number;
  schedule: Omit<PollSchedule, 'startedAtMs'>;
  /** The name the follow-up drew for the wait (WatchRegistration.replyTo). */
  replyTo: string;
}

/** The API's answer, and when the request left. */
export interface SentMessage extends SendResult {
  requestStartedAtMs: number;
  /** The first wait as registered with its watcher; null: registering it failed, and the follow-up does it itself. */
  watching?: WatchRegistration | null;
  /** The coordinator was told the send was accepted (`tellAccepted`); false: telling failed, the follow-up tells it. */
  acceptedTold?: boolean;
}

/**
 * The reads that settle a send whose outcome is open: up to `reads` of them, spaced by `reconcilePauseMs`, ending at
 * the first that differs from `baseline`. One attempt makes them all, so no workflow task (which a loaded worker can
 * delay by seconds) falls between them and the trust window they are judged by (counted from the request) is spent on
 * reading only.
 */
export interface SendOutcomeRequest extends JobRef {
  /** The idle job just before the send. */
  baseline: JobState;
  /** When the request left, or could have. */
  requestStartedAtMs: number;
  reads: number;
  /** The follow-up's deadline: an API that asks (Retry-After) to wait past it ends the reads. */
  deadlineMs: number;
}

export interface SendOutcomeReads {
  /** In the order made; every one but the last shows the job as `baseline`. */
  reads: Array<{ job: AgentJob; readAtMs: number }>;
}

/** A wait of the follow-up's own, on its job. */
export interface PollRequest extends JobRef, WaitRequest {}

export interface PollResult {
  job: AgentJob;
  /** When the returned read was made (worker clock). */
  readAtMs: number;
  /** Reads this wait made, all attempts together (approximate after a worker crash). */
  polls: number;
  /** A read of this wait showed the job `active`, even if the workflow already knew it so (proof of work). */
  sawActive: boolean;
  /**
   * For a wait with a result rule (WaitRequest.result): the reader's own read before this one (null: none), which the
   * follow-up judges the result by, as the reader did.
   */
  previous?: JobState | null;
}

export interface CheckInRequest {
  projectId: string;
  jobId: string;
  /** The follow-up checking in. */
  workflowId: string;
  runId: string;
  /**
   * The follow-up's name for its check-ins: its chain's first run id, or the sealed ticket an earlier check-in gave it
   * (the check-in seals it either way); the coordinator's grants and notices carry the sealed one back.
   */
  ticket: string;
  /** When the server started the follow-up's chain: its place in its job's lane. */
  startedAtMs: number;
  deadlineMs: number;
  /** The send attempt to ask a slot for, unless an earlier run delivered the message. */
  slotFor: string | null;
  /** Look up what earlier runs under this workflow id did (the first check-in of a run). */
  findEarlier: boolean;
  /** Which check-in of the run this is: with the run id, the update's id, so a retried attempt is taken once. */
  sequence?: number;
  /**
   * Read the job too when the check-in gives the job at once and no earlier run left a send to settle: the read
   * before the send, made here rather than by an activity of its own (a workflow task and an activity task fewer
   * between a follow-up's start and its send).
   */
  readJob?: boolean;
}

export interface CheckedIn {
  /**
   * The follow-up's sealed ticket: its messages to the coordinator carry it, and it takes only messages that carry it
   * (ticket-seal.activity.ts). An answer of our own activity, so it is believed.
   */
  ticket: string;
  /** What an earlier run under this workflow id did with the message (null: none sent it). */
  earlier: DeliveryRecord | null;
  /** How long the follow-up may first hear nothing from the coordinator while it waits before it checks in again. */
  recheckAfterMs: number;
  /** This follow-up waits through shared watchers of this many shards (absent: it polls its own job). */
  watchShards?: number;
  /** The worker's callback URL (AGENT_NOTIFY_URL), for a follow-up without a `notify` of its own. */
  notifyUrl?: string;
  /** Its turn (and slot) if the coordinator gave them at once; null: it waits for a `standing` signal. */
  standing?: TurnGrant | null;
  /** What it waits for, when it waits. */
  notice?: QueueNotice | null;
  /**
   * The job as read right after the check-in gave the job (`readJob`); absent when not asked, not given at once, or
   * the read failed (the follow-up then reads by its usual path, under the read rules).
   */
  jobRead?: AgentJob;
}

export interface WatchJobsRequest {
  /** The watcher workflow this activity reads for. */
  watcherId: string;
  /**
   * The name the watcher drew for this reader (absent from a watcher of an earlier build): its `awaitChanges` looks
   * carry it, and the watcher takes no look without it, so one sent from elsewhere cannot end or shut out the reader's.
   */
  reader?: string;
}

/**
 * How long before its planned time a watcher's turn starts: a durable timer may fire up to about a second late (the
 * dev server's timers did), so the turn's activity waits out the rest and reads on time. The activity never waits
 * longer than this, whatever the workflow's clock said: another worker's clock may run ahead of its own.
 */
export const TURN_STARTS_EARLY_MS = 1_000;

export interface ReadWatchedJobsRequest {
  /** The waits to read, as the watcher keeps them. */
  waits: WatchedWait[];
  /** Read no sooner than this (the turn's planned time), waiting at most `TURN_STARTS_EARLY_MS` for it. */
  notBeforeMs?: number;
}

export interface ReadWatchedJobsResult {
  /** Each wait after its read (its answer told when `wait.answered`), in the request's order. */
  waits: { wait: WaitAfterRead; gone: boolean }[];
}

/** A wait's state after a read, named by its identity only: the watcher has the rest of its registration. */
export type WaitAfterRead = Omit<WatchedWait, 'registration'> & {
  registration: Pick<WatchRegistration, 'workflowId' | 'runId' | 'round' | 'replyTo'>;
};

export interface AdoptBookRequest {
  watcherId: string;
  /** The watcher's own run: the run before it is any other. */
  runId: string;
}
