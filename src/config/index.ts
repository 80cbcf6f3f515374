/**
 * Start-up configuration, read from the environment once and validated with zod. Every problem is listed together,
 * and no message ever contains the API key. Activities and workflows never read the environment themselves.
 */
import { isIP } from 'node:net';
import { isLoopbackHost } from '../loopback';
import type { NativeConnectionOptions } from '@temporalio/worker';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { z } from 'zod';
import { DEFAULT_GET_JOB_PATH, DEFAULT_SEND_PATH, type AgentApiClientConfig } from '../agent-api/http-client';
import { nonAdminKeyKind } from '../agent-api/key-kinds';
import { formatMs, parseDuration } from '../kernel/duration';
import { notifyProblem } from '../kernel/request';
import { isAddressBlock, isMetadataHostName } from '../kernel/address-class';
import { urlTargetRefusal, type AddressPolicy } from '../address-guard';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat } from './log-settings';
import { DEFAULT_COORDINATOR_TASK_QUEUE, DEFAULT_TASK_QUEUE } from '../kernel/workflow-ids';
import { plainWholeNumber, sendBudgetProblem, DEFAULT_SENDS_PER_PROJECT_PER_HOUR } from '../kernel/send-budget-rule';
import { DEFAULT_WATCH_SHARDS } from './watch-defaults';
import { WORKER_DEFAULTS } from './worker-defaults';
import type { EncryptionKey } from '../encryption/aes-gcm-codec';
import { parsePayloadKeys } from '../encryption/payload-keys';
import { NotificationSecretError, notificationKey } from '../notify/signature';
export { DEFAULT_TASK_QUEUE };
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';
export const DEFAULT_AGENT_API_BASE_URL = 'https://api.mintlify.com';

const MAX_REQUEST_TIMEOUT_MS = 25_000;

type Env = Record<string, string | undefined>;

/** A configuration problem: the message lists every bad variable and how to fix it. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Checks the documented key form (docs/VENDOR-CONTRACT.md, "The key"): a fixed prefix, an underscore, then the secret. Returns a problem or
 * null; the problem never quotes the key.
 */
export function apiKeyProblem(key: string | undefined, prefix: string): string | null {
  const fix = `set it to the admin key from the dashboard's API keys page, of the form ${prefix}_<secret>`;
  if (key === undefined || key === '') return `AGENT_API_KEY is not set: ${fix}`;
  if (key !== key.trim()) return `AGENT_API_KEY has leading or trailing white space: ${fix}`;
  if (!key.startsWith(`${prefix}_`)) {
    return `AGENT_API_KEY does not start with "${prefix}_": ${fix} (or set AGENT_API_KEY_PREFIX if your service uses another prefix)`;
  }
  // Another key kind of the vendor's (agent-api/key-kinds.ts), caught here at start-up instead of at the first follow-up.
  const kind = nonAdminKeyKind(key, prefix);
  if (kind) {
    return `AGENT_API_KEY is ${kind.name} key ("${prefix}_${kind.infix}_..."), which the agent endpoints refuse: ${fix}`;
  }
  const secret = key.slice(prefix.length + 1);
  if (secret.length < 8)
    return `AGENT_API_KEY's secret part after "${prefix}_" is too short (under 8 characters): ${fix}`;
  if (!/^[\x21-\x7e]+$/.test(secret)) {
    return `AGENT_API_KEY's secret part has characters that cannot be sent in an HTTP header: ${fix}`;
  }
  return null;
}

/** Refuses plain http:// except to loopback (the simulator) or when explicitly allowed. */
export function baseUrlProblem(value: string, allowInsecureHttp: boolean): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `AGENT_API_BASE_URL is not a URL: use a form such as ${DEFAULT_AGENT_API_BASE_URL}`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return `AGENT_API_BASE_URL must use https:// (got ${url.protocol})`;
  }
  if (url.username || url.password)
    return 'AGENT_API_BASE_URL must not contain credentials; the key goes in AGENT_API_KEY';
  if (url.search || url.hash) return 'AGENT_API_BASE_URL must not have a query or fragment';
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !allowInsecureHttp) {
    return (
      'AGENT_API_BASE_URL uses plain http:// to a host that is not this machine, which would send the API key in ' +
      'clear text: use https://, or set AGENT_API_ALLOW_INSECURE_HTTP=true if you really mean it'
    );
  }
  return null;
}

const booleanFlag = z
  .enum(['true', 'false', '1', '0', ''], { error: 'must be true or false' })
  .optional()
  .transform((value) => value === 'true' || value === '1');

/** A comma-separated list of host names and CIDR blocks (`hooks.corp.example, 10.20.0.0/16`). */
const allowedHosts = z
  .string()
  .optional()
  .transform((value, ctx) => {
    const entries = (value ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '');
    for (const entry of entries) {
      const problem = entry.includes('/')
        ? isAddressBlock(entry)
          ? undefined
          : `"${entry}" is not a CIDR block (e.g. 10.20.0.0/16 or fd00:1::/32)`
        : !/^[A-Za-z0-9.-]+$/.test(entry)
          ? `"${entry}" is not a host name (letters, digits, '.', '-') or a CIDR block`
          : isMetadataHostName(entry)
            ? `"${entry}" is a cloud metadata service, which cannot be allowed`
            : undefined;
      if (problem) {
        ctx.addIssue({ code: 'custom', message: `${problem}; list host names and CIDR blocks, comma-separated` });
        return z.NEVER;
      }
    }
    return entries;
  });

const WATCH_SHARDS_PROBLEM =
  'must be a whole number of shards from 0 to 1024 (e.g. 8), or 0 for each follow-up to poll its own job';

/** A duration such as "15s" or a number of milliseconds; `zeroMeans` allows 0 and says in the error what it does. */
const durationMs = (fallback: number, zeroMeans?: string) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      const millis = parseDuration(/^\d+$/.test(value) ? Number(value) : value);
      if (millis !== undefined && (millis > 0 || (millis === 0 && zeroMeans !== undefined))) return millis;
      const message =
        zeroMeans === undefined
          ? 'must be a positive duration such as "15s" or a number of milliseconds'
          : `must be a duration such as "5s" or a number of milliseconds (0: ${zeroMeans})`;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    });

/**
 * Checks `host:port` for the Prometheus endpoint; returns what is wrong (to follow the variable's name) or null. Core
 * binds it as a socket address, so the host must be an IP literal (`0.0.0.0`, `127.0.0.1`, `[::]`): a name such as
 * `localhost` would only fail later, inside Runtime.install.
 */
export function metricsAddressProblem(value: string): string | null {
  const fix =
    'use host:port with an IP address, e.g. 0.0.0.0:9464 or 127.0.0.1:9464 (or leave it empty to turn metrics off)';
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  if (!match) return `is not host:port: ${fix}`;
  const ipv6 = match[1];
  if (ipv6 !== undefined ? isIP(ipv6) !== 6 : isIP(match[2] ?? '') !== 4)
    return `must use an IP address, not a host name: ${fix}`;
  const port = Number(match[3]);
  if (port < 1 || port > 65_535) return `has a port outside 1-65535: ${fix}`;
  return null;
}

const positiveWhole = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return fallback;
      if (/^\d+$/.test(value.trim()) && Number(value) >= 1) return Number(value);
      ctx.addIssue({ code: 'custom', message: 'must be a whole number of at least 1' });
      return z.NEVER;
    });

const WorkerEnvFields = z.object({
  AGENT_API_KEY: z.string().optional(),
  AGENT_API_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9]+$/, { error: 'must be letters and digits only, e.g. mint' })
    .default('mint'),
  AGENT_API_BASE_URL: z.string().default(DEFAULT_AGENT_API_BASE_URL),
  AGENT_API_ALLOW_INSECURE_HTTP: booleanFlag,
  // The base URL on this machine (the simulator) or a private network (a proxy, compose's simulator): off by default.
  AGENT_API_ALLOW_LOOPBACK: booleanFlag,
  AGENT_API_ALLOW_PRIVATE_NETWORKS: booleanFlag,
  AGENT_API_GET_JOB_PATH: z
    .string()
    // A path under AGENT_API_BASE_URL: an absolute URL would be appended to the base, and every read would then fail
    // as "job not found", which points at the job instead of at this setting.
    .refine((path) => path.startsWith('/') && !path.startsWith('//'), {
      error:
        'must be a path under AGENT_API_BASE_URL that starts with one /, e.g. /v2/agent/{projectId}/job/{id}, not a URL',
    })
    .refine((path) => path.includes('{projectId}') && path.includes('{id}'), {
      error: 'must contain {projectId} and {id}',
    })
    .default(DEFAULT_GET_JOB_PATH),
  // The poll activity's start-to-close is 30s; a request must give up before Temporal gives up on the attempt.
  AGENT_API_REQUEST_TIMEOUT: durationMs(15_000).refine((ms) => ms <= MAX_REQUEST_TIMEOUT_MS, {
    error: `must be at most ${MAX_REQUEST_TIMEOUT_MS / 1000}s`,
  }),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  AGENT_COORDINATOR_TASK_QUEUE: z.string().min(1).default(DEFAULT_COORDINATOR_TASK_QUEUE),
  WORKER_SHUTDOWN_GRACE_TIME: durationMs(30_000),
  WORKER_METRICS_ADDRESS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return null;
      const problem = metricsAddressProblem(value);
      if (problem === null) return value;
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }),
  LOG_FORMAT: z
    .string()
    .optional()
    .transform((value) => (value === undefined || value === '' ? 'text' : value.toLowerCase()))
    .pipe(z.enum(LOG_FORMATS, { error: `must be ${LOG_FORMATS.join(' or ')}` })),
  LOG_LEVEL: z
    .string()
    .optional()
    .transform((value) => (value === undefined || value === '' ? 'INFO' : value.toUpperCase()))
    .pipe(z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })),
  AGENT_SENDS_PER_PROJECT_PER_HOUR: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value === '') return DEFAULT_SENDS_PER_PROJECT_PER_HOUR;
      const number = plainWholeNumber(value);
      if (number !== undefined && number >= 1) return number;
      ctx.addIssue({
        code: 'custom',
        message: 'must be a whole number of sends per project per hour in plain digits (e.g. 80)',
      });
      return z.NEVER;
    }),
  AGENT_SENDS_ABOVE_VENDOR_LIMIT: booleanFlag,
  // For tests and benches only, and not in the README: the shards of job watchers per task queue (2; each grows a chain
  // as its books fill, so none needs sizing), or 0 for each follow-up to poll its own job (the bench measures it beside).
  AGENT_WATCH_SHARDS: z.coerce
    .number({ error: WATCH_SHARDS_PROBLEM })
    .int({ error: WATCH_SHARDS_PROBLEM })
    .min(0, { error: WATCH_SHARDS_PROBLEM })
    .max(1_024, { error: WATCH_SHARDS_PROBLEM })
    .default(DEFAULT_WATCH_SHARDS),
  // For tests only, and not in the README: the budget's window, shortened so a test sees it slide in seconds.
  AGENT_SEND_WINDOW_MS: z.coerce.number().int().min(1_000).optional(),
  WORKER_MAX_CACHED_WORKFLOWS: positiveWhole(WORKER_DEFAULTS.maxCachedWorkflows),
  WORKER_MAX_CONCURRENT_ACTIVITIES: positiveWhole(WORKER_DEFAULTS.maxConcurrentActivities),
  // The HMAC key of follow-ups' callbacks (notify); a secret, redacted from every log line like the API key.
  AGENT_NOTIFY_SECRET: z
    .string()
    .optional()
    .superRefine((value, context) => {
      if (value === undefined || value === '') return;
      // The rule receivers' verifyNotification applies: whsec_<base64> or raw, at least 24 bytes (notify/signature.ts).
      try {
        notificationKey(value);
      } catch (error) {
        if (!(error instanceof NotificationSecretError)) throw error;
        context.addIssue({
          code: 'custom',
          message: `${error.message}; or unset it when no follow-up asks for a callback`,
        });
      }
    }),
  AGENT_NOTIFY_ALLOW_INSECURE_HTTP: booleanFlag,
  // Internal callback targets a deployment really needs (address-guard.ts); none by default.
  AGENT_NOTIFY_ALLOW_LOOPBACK: booleanFlag,
  AGENT_NOTIFY_ALLOW_PRIVATE_NETWORKS: booleanFlag,
  AGENT_NOTIFY_ALLOW_HOSTS: allowedHosts,
  // Where follow-ups without a notify of their own post their callback; checked like a follow-up's notify.url.
  AGENT_NOTIFY_URL: z
    .string()
    .optional()
    .superRefine((value, context) => {
      const problem = value === undefined || value === '' ? undefined : notifyProblem({ url: value });
      if (problem) context.addIssue({ code: 'custom', message: `${problem.replace(/^notify\.url /, '')}` });
    }),
  // Payload encryption (encryption/payload-keys.ts): unset, payloads stay in clear.
  AGENT_PAYLOAD_KEYS: z
    .string()
    .optional()
    .transform((value, ctx) => {
      try {
        return value === undefined || value.trim() === '' ? undefined : parsePayloadKeys(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^AGENT_PAYLOAD_KEYS /, '') });
        return z.NEVER;
      }
    }),
  TEMPORAL_WORKER_IDENTITY: z
    .string()
    .max(255, { error: 'must be at most 255 characters' })
    .optional()
    .transform((value) => (value === undefined || value.trim() === '' ? undefined : value)),
});

const WorkerEnvSchema = WorkerEnvFields
  // Checks that read two variables run whenever those two are valid, so one run still lists every problem.
  .refine((vars) => apiKeyProblem(vars.AGENT_API_KEY, vars.AGENT_API_KEY_PREFIX) === null, {
    error: (issue) => apiKeyProblemOf(issue.input),
    when: validFields('AGENT_API_KEY_PREFIX'),
  })
  .refine((vars) => baseUrlProblem(vars.AGENT_API_BASE_URL, vars.AGENT_API_ALLOW_INSECURE_HTTP) === null, {
    error: (issue) => baseUrlProblemOf(issue.input),
    when: validFields('AGENT_API_BASE_URL', 'AGENT_API_ALLOW_INSECURE_HTTP'),
  })
  .refine((vars) => baseUrlTargetProblem(vars) === undefined, {
    error: (issue) => baseUrlTargetProblem(issue.input as WorkerEnv) ?? 'AGENT_API_BASE_URL is refused',
    path: ['AGENT_API_BASE_URL'],
    when: validFields('AGENT_API_BASE_URL', 'AGENT_API_ALLOW_LOOPBACK', 'AGENT_API_ALLOW_PRIVATE_NETWORKS'),
  })
  .refine(
    (vars) =>
      sendBudgetProblem(vars.AGENT_SENDS_PER_PROJECT_PER_HOUR, vars.AGENT_SENDS_ABOVE_VENDOR_LIMIT, '') === undefined,
    {
      error: (issue) => {
        const vars = issue.input as WorkerEnv;
        const problem = sendBudgetProblem(
          vars.AGENT_SENDS_PER_PROJECT_PER_HOUR,
          vars.AGENT_SENDS_ABOVE_VENDOR_LIMIT,
          'AGENT_SENDS_ABOVE_VENDOR_LIMIT=true',
        );
        return `AGENT_SENDS_PER_PROJECT_PER_HOUR (${vars.AGENT_SENDS_PER_PROJECT_PER_HOUR}) ${problem ?? 'is invalid'}`;
      },
      path: ['AGENT_SENDS_PER_PROJECT_PER_HOUR'],
      when: validFields('AGENT_SENDS_PER_PROJECT_PER_HOUR', 'AGENT_SENDS_ABOVE_VENDOR_LIMIT'),
    },
  )
  .refine((vars) => notifyUrlInsecure(vars) === false, {
    error: () =>
      'AGENT_NOTIFY_URL uses plain http:// to a host that is not this machine: use https://, or set ' +
      'AGENT_NOTIFY_ALLOW_INSECURE_HTTP=true if you really mean it',
    path: ['AGENT_NOTIFY_URL'],
    when: validFields('AGENT_NOTIFY_URL', 'AGENT_NOTIFY_ALLOW_INSECURE_HTTP'),
  })
  // A send cut off by shutdown may or may not have arrived: the grace time must let every request finish.
  .refine((vars) => vars.WORKER_SHUTDOWN_GRACE_TIME >= vars.AGENT_API_REQUEST_TIMEOUT, {
    error: (issue) => {
      const vars = issue.input as WorkerEnv;
      return (
        `WORKER_SHUTDOWN_GRACE_TIME (${formatMs(vars.WORKER_SHUTDOWN_GRACE_TIME)}) must be at least AGENT_API_REQUEST_TIMEOUT ` +
        `(${formatMs(vars.AGENT_API_REQUEST_TIMEOUT)}), so a send under way when the worker stops can finish`
      );
    },
    when: validFields('WORKER_SHUTDOWN_GRACE_TIME', 'AGENT_API_REQUEST_TIMEOUT'),
  });

type WorkerEnv = z.output<typeof WorkerEnvFields>;

/** Runs a cross-variable check only when none of the variables it reads has a problem of its own. */
function validFields(...names: (keyof WorkerEnv)[]): (payload: z.core.ParsePayload) => boolean {
  return (payload) => !payload.issues.some((issue) => names.includes(issue.path?.[0] as keyof WorkerEnv));
}

/** A default callback URL in plain http:// to another machine, not allowed. */
function notifyUrlInsecure(vars: WorkerEnv): boolean {
  if (!vars.AGENT_NOTIFY_URL || vars.AGENT_NOTIFY_ALLOW_INSECURE_HTTP) return false;
  try {
    const url = new URL(vars.AGENT_NOTIFY_URL);
    return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
  } catch {
    return false;
  }
}

/** Which internal addresses the base URL may reach, as the API client's guard takes it. */
function apiAddressPolicy(vars: WorkerEnv): AddressPolicy {
  return {
    allowLoopback: vars.AGENT_API_ALLOW_LOOPBACK,
    allowPrivateNetworks: vars.AGENT_API_ALLOW_PRIVATE_NETWORKS,
    settingPrefix: 'AGENT_API_ALLOW',
  };
}

/** A base URL that names a refused address literally (or a metadata name), found at start-up; names at connection. */
function baseUrlTargetProblem(vars: WorkerEnv): string | undefined {
  try {
    const refusal = urlTargetRefusal(new URL(vars.AGENT_API_BASE_URL), apiAddressPolicy(vars));
    return refusal === undefined ? undefined : `is refused: ${refusal.replace(/ on the workers if/, ' if')}`;
  } catch {
    return undefined;
  }
}

function apiKeyProblemOf(input: unknown): string {
  const vars = input as WorkerEnv;
  return apiKeyProblem(vars.AGENT_API_KEY, vars.AGENT_API_KEY_PREFIX) ?? 'AGENT_API_KEY is invalid';
}

function baseUrlProblemOf(input: unknown): string {
  const vars = input as WorkerEnv;
  return baseUrlProblem(vars.AGENT_API_BASE_URL, vars.AGENT_API_ALLOW_INSECURE_HTTP) ?? 'AGENT_API_BASE_URL is invalid';
}

export interface TemporalSettings {
  connectionOptions: NativeConnectionOptions;
  namespace: string;
  taskQueue: string;
  /** Where project coordinators run (AGENT_COORDINATOR_TASK_QUEUE): the same for every worker and client of a namespace. */
  coordinatorTaskQueue: string;
}

export interface ObservabilitySettings {
  /** `host:port` of the Prometheus `/metrics` endpoint, or null when it is off. */
  metricsAddress: string | null;
  logFormat: LogFormat;
  logLevel: (typeof LOG_LEVELS)[number];
}

export interface WorkerConfig {
  agentApi: Required<AgentApiClientConfig>;
  temporal: TemporalSettings;
  shutdownGraceTimeMs: number;
  maxCachedWorkflows: number;
  maxConcurrentActivities: number;
  /** A project's send budget unless `budget set` gave it its own. */
  sendsPerProjectPerHour: number;
  /** Shards of shared job watchers per task queue (0: each follow-up polls its own job). */
  watchShards: number;
  /** The budget's window for coordinators this worker starts (tests only; an hour otherwise). */
  sendWindowMs?: number;
  observability: ObservabilitySettings;
  /** How callbacks are signed (AGENT_NOTIFY_SECRET) and whether plain http:// may leave this machine. */
  notify: {
    secret?: string;
    allowInsecureHttp: boolean;
    defaultUrl?: string;
    /** Internal targets allowed (AGENT_NOTIFY_ALLOW_LOOPBACK, _PRIVATE_NETWORKS, _HOSTS); the rest is refused. */
    allowLoopback: boolean;
    allowPrivateNetworks: boolean;
    allowHosts: string[];
  };
  /** The keys payloads are encrypted with (AGENT_PAYLOAD_KEYS), the first one for new payloads; absent: in clear. */
  payloadKeys?: EncryptionKey[];
  /** The worker's identity in histories (`ActivityTaskStarted.identity`); the SDK's `pid@host` when unset. */
  identity?: string;
}

/**
 * Temporal connection settings, the standard way: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
 * TEMPORAL_TLS_*, TEMPORAL_PROFILE and the temporal.toml profiles, through @temporalio/envconfig.
 */
export function loadTemporalSettings(env: Env = process.env): TemporalSettings {
  const overrideEnvVars = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const { connectionOptions, namespace } = loadClientConnectConfig({ overrideEnvVars });
  return {
    connectionOptions: { ...connectionOptions, address: connectionOptions.address ?? DEFAULT_TEMPORAL_ADDRESS },
    namespace: namespace ?? 'default',
    taskQueue: env.TEMPORAL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
    coordinatorTaskQueue: env.AGENT_COORDINATOR_TASK_QUEUE || DEFAULT_COORDINATOR_TASK_QUEUE,
  };
}

/** Reads and checks the worker's whole configuration; throws one ConfigError listing every problem. */
export function loadWorkerConfig(env: Env = process.env): WorkerConfig {
  const parsed = WorkerEnvSchema.safeParse(env);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) =>
        issue.path.length > 0 ? `${issue.path.map(String).join('.')} ${issue.message}` : issue.message,
      );

  let temporal: TemporalSettings | undefined;
  try {
    temporal = loadTemporalSettings(env);
  } catch (error) {
    problems.push(`Temporal connection settings: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!parsed.success || problems.length > 0 || !temporal) {
    throw new ConfigError(`The worker's configuration is invalid:\n- ${problems.join('\n- ')}`);
  }
  const vars = parsed.data;
  return {
    agentApi: {
      baseUrl: vars.AGENT_API_BASE_URL,
      apiKey: vars.AGENT_API_KEY as string,
      requestTimeoutMs: vars.AGENT_API_REQUEST_TIMEOUT,
      sendPath: DEFAULT_SEND_PATH,
      getJobPath: vars.AGENT_API_GET_JOB_PATH,
      addressGuard: { policy: apiAddressPolicy(vars) },
    },
    temporal,
    shutdownGraceTimeMs: vars.WORKER_SHUTDOWN_GRACE_TIME,
    maxCachedWorkflows: vars.WORKER_MAX_CACHED_WORKFLOWS,
    maxConcurrentActivities: vars.WORKER_MAX_CONCURRENT_ACTIVITIES,
    sendsPerProjectPerHour: vars.AGENT_SENDS_PER_PROJECT_PER_HOUR,
    watchShards: vars.AGENT_WATCH_SHARDS,
    ...(vars.AGENT_SEND_WINDOW_MS !== undefined ? { sendWindowMs: vars.AGENT_SEND_WINDOW_MS } : {}),
    observability: {
      metricsAddress: vars.WORKER_METRICS_ADDRESS,
      logFormat: vars.LOG_FORMAT,
      logLevel: vars.LOG_LEVEL,
    },
    ...(vars.TEMPORAL_WORKER_IDENTITY !== undefined ? { identity: vars.TEMPORAL_WORKER_IDENTITY } : {}),
    ...(vars.AGENT_PAYLOAD_KEYS !== undefined ? { payloadKeys: vars.AGENT_PAYLOAD_KEYS } : {}),
    notify: {
      ...(vars.AGENT_NOTIFY_SECRET ? { secret: vars.AGENT_NOTIFY_SECRET } : {}),
      allowInsecureHttp: vars.AGENT_NOTIFY_ALLOW_INSECURE_HTTP,
      allowLoopback: vars.AGENT_NOTIFY_ALLOW_LOOPBACK,
      allowPrivateNetworks: vars.AGENT_NOTIFY_ALLOW_PRIVATE_NETWORKS,
      allowHosts: vars.AGENT_NOTIFY_ALLOW_HOSTS,
      ...(vars.AGENT_NOTIFY_URL ? { defaultUrl: vars.AGENT_NOTIFY_URL } : {}),
    },
  };
}
