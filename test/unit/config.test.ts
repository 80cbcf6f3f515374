import {
  ConfigError,
  apiKeyProblem,
  baseUrlProblem,
  loadTemporalSettings,
  loadWorkerConfig,
  metricsAddressProblem,
  type WorkerConfig,
} from '../../src/config';

const KEY = 'mint_test_config_key_0001';
const SECRET = 'test_config_key_0001';

/** The ConfigError a bad environment must throw. */
function configErrorOf(env: Record<string, string | undefined>): ConfigError {
  let config: WorkerConfig;
  try {
    config = loadWorkerConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`expected a ConfigError, got a config for ${config.agentApi.baseUrl}`);
}

describe('apiKeyProblem', () => {
  test('a key of the documented form has no problem', () => {
    expect(apiKeyProblem(KEY, 'mint')).toBeNull();
  });

  test('a secret of exactly 8 characters is long enough', () => {
    expect(apiKeyProblem('mint_abcd1234', 'mint')).toBeNull();
  });

  test.each([
    ['mint_dsc_0123456789abcdef', 'an assistant key ("mint_dsc_...")'],
    ['mint_us_0123456789abcdef', 'a search/index key ("mint_us_...")'],
  ])("the vendor's other key kinds (%s) are refused at start-up, naming the kind and the fix", (key, kind) => {
    const problem = apiKeyProblem(key, 'mint');
    expect(problem).toContain(`AGENT_API_KEY is ${kind}, which the agent endpoints refuse`);
    expect(problem).toContain("set it to the admin key from the dashboard's API keys page");
    expect(problem).not.toContain('0123456789abcdef');
  });

  test('a key with a custom prefix is accepted when that prefix is configured', () => {
    expect(apiKeyProblem('acme_test_config_key_0001', 'acme')).toBeNull();
  });

  test.each([undefined, ''])('a missing key (%j) is reported as not set, with the form to use', (key) => {
    const problem = apiKeyProblem(key, 'mint');
    expect(problem).toContain('AGENT_API_KEY is not set');
    expect(problem).toContain('mint_<secret>');
  });

  test.each<[string, string, string, string]>([
    ['leading white space', ` ${KEY}`, 'mint', 'leading or trailing white space'],
    ['a trailing new line', `${KEY}\n`, 'mint', 'leading or trailing white space'],
    ['another service prefix', 'sk_test_config_key_0001', 'mint', 'does not start with "mint_"'],
    ['the prefix without its underscore', 'minttest_config_key_0001', 'mint', 'does not start with "mint_"'],
    ['the default prefix where a custom one is configured', KEY, 'acme', 'does not start with "acme_"'],
    ['a secret of 7 characters', 'mint_tq7wz3k', 'mint', 'too short'],
    ['a space inside the secret', 'mint_test config_key_0001', 'mint', 'cannot be sent in an HTTP header'],
    ['a non-ASCII secret', 'mint_tést_config_key_0001', 'mint', 'cannot be sent in an HTTP header'],
    ['a control character in the secret', 'mint_test_config\u0007key_0001', 'mint', 'cannot be sent in an HTTP header'],
  ])('a key with %s is refused and the problem never quotes the key or its secret', (_title, key, prefix, fragment) => {
    const problem = apiKeyProblem(key, prefix);
    expect(problem).toContain(fragment);
    expect(problem).toContain('AGENT_API_KEY');
    expect(problem).not.toContain(key);
    expect(problem).not.toContain(key.trim());
    const secret = key.trim().slice(key.trim().indexOf('_') + 1);
    expect(problem).not.toContain(secret);
  });

  test('a wrong prefix points at AGENT_API_KEY_PREFIX as the other fix', () => {
    expect(apiKeyProblem('sk_test_config_key_0001', 'mint')).toContain('AGENT_API_KEY_PREFIX');
  });
});

describe('baseUrlProblem', () => {
  test.each(['https://api.mintlify.com', 'https://proxy.example.com/agent-api/', 'https://api.example.com:8443'])(
    'https URL %s is accepted',
    (url) => {
      expect(baseUrlProblem(url, false)).toBeNull();
    },
  );

  test.each(['http://localhost:4010', 'http://127.0.0.1:4010', 'http://[::1]:4010', 'http://127.0.0.2'])(
    'plain http to this machine (%s) is accepted for the simulator',
    (url) => {
      expect(baseUrlProblem(url, false)).toBeNull();
    },
  );

  test.each([
    'http://api.example.com',
    'http://10.0.0.5:8080',
    'http://localhost.example.com',
    'http://127.evil.example',
    'http://127.0.0.1.nip.io',
  ])('plain http to another host (%s) is refused because the key would travel in clear text', (url) => {
    const problem = baseUrlProblem(url, false);
    expect(problem).toContain('AGENT_API_BASE_URL uses plain http://');
    expect(problem).toContain('AGENT_API_ALLOW_INSECURE_HTTP=true');
  });

  test('plain http to another host is accepted when insecure http is explicitly allowed', () => {
    expect(baseUrlProblem('http://api.example.com', true)).toBeNull();
  });

  test.each(['not a url', 'api.mintlify.com', ''])('%j is refused as not a URL', (value) => {
    expect(baseUrlProblem(value, false)).toContain('AGENT_API_BASE_URL is not a URL');
  });

  test('credentials in the URL are refused without being quoted', () => {
    const problem = baseUrlProblem('https://admin:hunter2pass@api.example.com', false);
    expect(problem).toContain('must not contain credentials');
    expect(problem).not.toContain('hunter2pass');
    expect(problem).not.toContain('admin');
  });

  test('an ftp URL is refused naming its scheme', () => {
    expect(baseUrlProblem('ftp://files.example.com', false)).toBe('AGENT_API_BASE_URL must use https:// (got ftp:)');
  });

  test('insecure http being allowed does not let other schemes through', () => {
    expect(baseUrlProblem('ftp://files.example.com', true)).toContain('must use https://');
  });

  test.each(['https://api.example.com/?region=eu', 'https://api.example.com/#top'])(
    'a URL with a query or fragment (%s) is refused',
    (url) => {
      expect(baseUrlProblem(url, false)).toContain('must not have a query or fragment');
    },
  );
});

describe('loadWorkerConfig', () => {
  test('an environment with only the key gets every default', () => {
    expect(loadWorkerConfig({ AGENT_API_KEY: KEY })).toEqual({
      agentApi: {
        baseUrl: 'https://api.mintlify.com',
        apiKey: KEY,
        requestTimeoutMs: 15_000,
        sendPath: '/v2/agent/{projectId}/job/{id}/message',
        getJobPath: '/v2/agent/{projectId}/job/{id}',
        addressGuard: {
          policy: { allowLoopback: false, allowPrivateNetworks: false, settingPrefix: 'AGENT_API_ALLOW' },
        },
      },
      temporal: {
        connectionOptions: { address: 'localhost:7233' },
        namespace: 'default',
        taskQueue: 'agent-followup',
        coordinatorTaskQueue: 'agent-followup-coordinators',
      },
      shutdownGraceTimeMs: 30_000,
      maxCachedWorkflows: 100,
      maxConcurrentActivities: 2_000,
      sendsPerProjectPerHour: 80,
      watchShards: 2,
      // Metrics are off unless an address is given: two workers on one host would otherwise fight over one port.
      observability: { metricsAddress: null, logFormat: 'text', logLevel: 'INFO' },
      notify: { allowInsecureHttp: false, allowLoopback: false, allowPrivateNetworks: false, allowHosts: [] },
    });
  });

  test("a project's default send budget is a whole number of sends per hour; there is no way to turn it off", () => {
    expect(
      loadWorkerConfig({ AGENT_API_KEY: KEY, AGENT_SENDS_PER_PROJECT_PER_HOUR: '45' }).sendsPerProjectPerHour,
    ).toBe(45);
    expect(configErrorOf({ AGENT_API_KEY: KEY, AGENT_SENDS_PER_PROJECT_PER_HOUR: 'none' }).message).toContain(
      'AGENT_SENDS_PER_PROJECT_PER_HOUR must be a whole number',
    );
    expect(configErrorOf({ AGENT_API_KEY: KEY, AGENT_SENDS_PER_PROJECT_PER_HOUR: '45.5' }).message).toContain(
      'AGENT_SENDS_PER_PROJECT_PER_HOUR must be a whole number',
    );
  });

  test.each(['1e3', '0x10', ' 5', '+5', '0'])('a send budget of %j is refused: plain digits, at least 1', (value) => {
    expect(configErrorOf({ AGENT_API_KEY: KEY, AGENT_SENDS_PER_PROJECT_PER_HOUR: value }).message).toContain(
      'AGENT_SENDS_PER_PROJECT_PER_HOUR must be a whole number of sends per project per hour in plain digits',
    );
  });

  test("a send budget above the vendor's 100 per hour needs AGENT_SENDS_ABOVE_VENDOR_LIMIT=true, and says why", () => {
    expect(configErrorOf({ AGENT_API_KEY: KEY, AGENT_SENDS_PER_PROJECT_PER_HOUR: '150' }).message).toContain(
      "AGENT_SENDS_PER_PROJECT_PER_HOUR (150) is above the vendor's documented limit of 100 uses per project per hour",
    );
    expect(configErrorOf({ AGENT_API_KEY: KEY, AGENT_SENDS_PER_PROJECT_PER_HOUR: '150' }).message).toContain(
      'AGENT_SENDS_ABOVE_VENDOR_LIMIT=true',
    );
    const allowed = {
      AGENT_API_KEY: KEY,
      AGENT_SENDS_PER_PROJECT_PER_HOUR: '150',
      AGENT_SENDS_ABOVE_VENDOR_LIMIT: 'true',
    };
    expect(loadWorkerConfig(allowed).sendsPerProjectPerHour).toBe(150);
    expect(
      loadWorkerConfig({ AGENT_API_KEY: KEY, AGENT_SENDS_PER_PROJECT_PER_HOUR: '100' }).sendsPerProjectPerHour,
    ).toBe(100);
  });

  test('every documented variable overrides its default', () => {
    const config = loadWorkerConfig({
      AGENT_API_KEY: 'acme_test_config_key_0001',
      AGENT_API_KEY_PREFIX: 'acme',
      AGENT_API_BASE_URL: 'http://agent-api.internal:8080',
      AGENT_API_ALLOW_INSECURE_HTTP: 'true',
      AGENT_API_ALLOW_LOOPBACK: 'true',
      AGENT_API_ALLOW_PRIVATE_NETWORKS: 'true',
      AGENT_API_GET_JOB_PATH: '/v3/projects/{projectId}/jobs/{id}',
      AGENT_API_REQUEST_TIMEOUT: '5s',
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_NAMESPACE: 'followups',
      TEMPORAL_TASK_QUEUE: 'followups-queue',
      WORKER_SHUTDOWN_GRACE_TIME: '1m',
      WORKER_METRICS_ADDRESS: '0.0.0.0:9464',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'debug',
      TEMPORAL_WORKER_IDENTITY: 'worker-a@host-1',
    });
    expect(config.agentApi).toEqual({
      baseUrl: 'http://agent-api.internal:8080',
      apiKey: 'acme_test_config_key_0001',
      requestTimeoutMs: 5_000,
      sendPath: '/v2/agent/{projectId}/job/{id}/message',
      getJobPath: '/v3/projects/{projectId}/jobs/{id}',
      addressGuard: { policy: { allowLoopback: true, allowPrivateNetworks: true, settingPrefix: 'AGENT_API_ALLOW' } },
    });
    expect(config.temporal.connectionOptions.address).toBe('temporal.internal:7233');
    expect(config.temporal.namespace).toBe('followups');
    expect(config.temporal.taskQueue).toBe('followups-queue');
    expect(config.shutdownGraceTimeMs).toBe(60_000);
    expect(config.observability).toEqual({ metricsAddress: '0.0.0.0:9464', logFormat: 'json', logLevel: 'DEBUG' });
    expect(config.identity).toBe('worker-a@host-1');
  });

  test('a request timeout given as a bare number is read as milliseconds', () => {
    expect(loadWorkerConfig({ AGENT_API_KEY: KEY, AGENT_API_REQUEST_TIMEOUT: '2500' }).agentApi.requestTimeoutMs).toBe(
      2_500,
    );
  });

  test('empty optional variables fall back to their defaults', () => {
    const config = loadWorkerConfig({
      AGENT_API_KEY: KEY,
      AGENT_API_REQUEST_TIMEOUT: '',
      WORKER_SHUTDOWN_GRACE_TIME: '',
      WORKER_METRICS_ADDRESS: '',
      LOG_FORMAT: '',
      LOG_LEVEL: '',
      TEMPORAL_WORKER_IDENTITY: ' ',
    });
    expect(config.agentApi.requestTimeoutMs).toBe(15_000);
    expect(config.shutdownGraceTimeMs).toBe(30_000);
    expect(config.observability).toEqual({ metricsAddress: null, logFormat: 'text', logLevel: 'INFO' });
    expect(config).not.toHaveProperty('identity');
  });

  test.each(['127.0.0.1:9464', '0.0.0.0:1', '[::]:9464', '[::1]:65535'])(
    'metrics address %s is accepted as given',
    (address) => {
      expect(
        loadWorkerConfig({ AGENT_API_KEY: KEY, WORKER_METRICS_ADDRESS: address }).observability.metricsAddress,
      ).toBe(address);
    },
  );

  test.each<[string, string]>([
    ['9464', 'is not host:port'],
    [':9464', 'is not host:port'],
    ['127.0.0.1', 'is not host:port'],
    ['::1:9464', 'is not host:port'],
    ['http://127.0.0.1:9464', 'is not host:port'],
    ['localhost:9464', 'must use an IP address, not a host name'],
    ['metrics.internal:9464', 'must use an IP address, not a host name'],
    ['999.0.0.1:9464', 'must use an IP address, not a host name'],
    ['[127.0.0.1]:9464', 'must use an IP address, not a host name'],
    ['127.0.0.1:0', 'has a port outside 1-65535'],
    ['127.0.0.1:70000', 'has a port outside 1-65535'],
  ])('metrics address %j is refused: %s', (address, fragment) => {
    expect(metricsAddressProblem(address)).toContain(fragment);
    const error = configErrorOf({ AGENT_API_KEY: KEY, WORKER_METRICS_ADDRESS: address });
    expect(error.message).toContain(`WORKER_METRICS_ADDRESS ${fragment}`);
    expect(error.message).toContain('0.0.0.0:9464');
  });

  test.each(['TEXT', 'Json'])('LOG_FORMAT %j is read case-insensitively', (format) => {
    expect(loadWorkerConfig({ AGENT_API_KEY: KEY, LOG_FORMAT: format }).observability.logFormat).toBe(
      format.toLowerCase(),
    );
  });

  test('a long worker identity is refused', () => {
    expect(configErrorOf({ AGENT_API_KEY: KEY, TEMPORAL_WORKER_IDENTITY: 'w'.repeat(256) }).message).toContain(
      'TEMPORAL_WORKER_IDENTITY must be at most 255 characters',
    );
  });

  test('bad observability variables are listed with the other problems, never quoting the key', () => {
    const error = configErrorOf({
      AGENT_API_KEY: KEY,
      WORKER_METRICS_ADDRESS: 'localhost:9464',
      LOG_FORMAT: 'xml',
      LOG_LEVEL: 'loud',
    });
    expect(error.message).toContain('WORKER_METRICS_ADDRESS must use an IP address');
    expect(error.message).toContain('LOG_FORMAT must be text or json');
    expect(error.message).toContain('LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR');
    expect(error.message.split('\n- ')).toHaveLength(4);
    expect(error.message).not.toContain(KEY);
    expect(error.message).not.toContain(SECRET);
  });

  test('the simulator on loopback needs no insecure-http flag, only AGENT_API_ALLOW_LOOPBACK', () => {
    const env = { AGENT_API_KEY: KEY, AGENT_API_BASE_URL: 'http://127.0.0.1:4010' };
    expect(loadWorkerConfig({ ...env, AGENT_API_ALLOW_LOOPBACK: 'true' }).agentApi.baseUrl).toBe(
      'http://127.0.0.1:4010',
    );
    expect(() => loadWorkerConfig(env)).toThrow(
      'AGENT_API_BASE_URL is refused: refused to connect to 127.0.0.1: it is a loopback address (this machine); ' +
        'set AGENT_API_ALLOW_LOOPBACK=true if this target is meant',
    );
    expect(() => loadWorkerConfig({ ...env, AGENT_API_BASE_URL: 'https://169.254.169.254/' })).toThrow('link-local');
    expect(() => loadWorkerConfig({ ...env, AGENT_API_BASE_URL: 'https://10.1.2.3/' })).toThrow(
      'AGENT_API_ALLOW_PRIVATE_NETWORKS=true',
    );
  });

  test('a bad environment lists every problem in one ConfigError', () => {
    const error = configErrorOf({ AGENT_API_BASE_URL: 'http://api.example.com', AGENT_API_REQUEST_TIMEOUT: '30s' });
    expect(error.name).toBe('ConfigError');
    expect(error.message).toContain("The worker's configuration is invalid");
    expect(error.message).toContain('AGENT_API_KEY is not set');
    expect(error.message).toContain('AGENT_API_REQUEST_TIMEOUT must be at most 25s');
    expect(error.message).toContain('AGENT_API_BASE_URL uses plain http://');
    expect(error.message.split('\n- ')).toHaveLength(4);
  });

  test('a variable that fails its own check does not hide the key and URL problems', () => {
    const error = configErrorOf({ AGENT_API_REQUEST_TIMEOUT: 'soon', AGENT_API_BASE_URL: 'http://example.com' });
    expect(error.message).toContain('AGENT_API_REQUEST_TIMEOUT must be a positive duration');
    expect(error.message).toContain('AGENT_API_KEY is not set');
    expect(error.message).toContain('AGENT_API_BASE_URL uses plain http://');
  });

  test('a malformed key is reported without the key appearing anywhere in the message', () => {
    const badKey = 'sk_test_config_key_0001';
    const error = configErrorOf({
      AGENT_API_KEY: badKey,
      AGENT_API_BASE_URL: `https://user:${badKey}@api.example.com`,
    });
    expect(error.message).toContain('AGENT_API_KEY does not start with "mint_"');
    expect(error.message).toContain('must not contain credentials');
    expect(error.message).not.toContain(badKey);
    expect(error.message).not.toContain('test_config_key_0001');
  });

  test('a good key next to a bad variable is never quoted in the message', () => {
    const error = configErrorOf({ AGENT_API_KEY: KEY, AGENT_API_BASE_URL: 'http://api.example.com' });
    expect(error.message).toContain('AGENT_API_BASE_URL');
    expect(error.message).not.toContain(KEY);
    expect(error.message).not.toContain(SECRET);
  });

  test('a key with a short secret is refused and not quoted', () => {
    const error = configErrorOf({ AGENT_API_KEY: 'mint_tq7wz3k' });
    expect(error.message).toContain('too short');
    expect(error.message).not.toContain('tq7wz3k');
  });

  test.each<[string, Record<string, string>, string]>([
    [
      'a request timeout that is not a duration',
      { AGENT_API_REQUEST_TIMEOUT: 'soon' },
      'AGENT_API_REQUEST_TIMEOUT must be a positive duration',
    ],
    [
      'a zero request timeout',
      { AGENT_API_REQUEST_TIMEOUT: '0' },
      'AGENT_API_REQUEST_TIMEOUT must be a positive duration',
    ],
    [
      'a negative grace time',
      { WORKER_SHUTDOWN_GRACE_TIME: '-5s' },
      'WORKER_SHUTDOWN_GRACE_TIME must be a positive duration',
    ],
    [
      'a grace time shorter than the request timeout',
      { WORKER_SHUTDOWN_GRACE_TIME: '5s', AGENT_API_REQUEST_TIMEOUT: '15s' },
      'WORKER_SHUTDOWN_GRACE_TIME (5s) must be at least AGENT_API_REQUEST_TIMEOUT (15s)',
    ],
    [
      'a cache size that is not a whole number',
      { WORKER_MAX_CACHED_WORKFLOWS: 'many' },
      'WORKER_MAX_CACHED_WORKFLOWS must be a whole number of at least 1',
    ],
    [
      'no activity slots',
      { WORKER_MAX_CONCURRENT_ACTIVITIES: '0' },
      'WORKER_MAX_CONCURRENT_ACTIVITIES must be a whole number of at least 1',
    ],
    [
      'a send budget that is not a number',
      { AGENT_SENDS_PER_PROJECT_PER_HOUR: 'lots' },
      'AGENT_SENDS_PER_PROJECT_PER_HOUR must be a whole number of sends per project per hour in plain digits (e.g. 80)',
    ],
    [
      'an insecure-http flag that is not a boolean',
      { AGENT_API_ALLOW_INSECURE_HTTP: 'yes' },
      'AGENT_API_ALLOW_INSECURE_HTTP must be true or false',
    ],
    [
      'a get-job path without {id}',
      { AGENT_API_GET_JOB_PATH: '/v2/agent/{projectId}/job' },
      'AGENT_API_GET_JOB_PATH must contain {projectId} and {id}',
    ],
    [
      'a get-job path that is an absolute URL',
      { AGENT_API_GET_JOB_PATH: 'https://api.example.com/v2/agent/{projectId}/job/{id}' },
      'AGENT_API_GET_JOB_PATH must be a path under AGENT_API_BASE_URL that starts with one /',
    ],
    [
      'a get-job path that is protocol-relative',
      { AGENT_API_GET_JOB_PATH: '//evil.example/{projectId}/{id}' },
      'AGENT_API_GET_JOB_PATH must be a path under AGENT_API_BASE_URL',
    ],
    [
      'a key prefix with an underscore',
      { AGENT_API_KEY_PREFIX: 'mint_' },
      'AGENT_API_KEY_PREFIX must be letters and digits only',
    ],
    ['an empty task queue', { TEMPORAL_TASK_QUEUE: '' }, 'TEMPORAL_TASK_QUEUE'],
  ])('%s is refused naming the variable', (_title, env, fragment) => {
    const error = configErrorOf({ AGENT_API_KEY: KEY, ...env });
    expect(error.message).toContain(fragment);
    expect(error.message).not.toContain(KEY);
  });

  test('several malformed variables are listed together', () => {
    const error = configErrorOf({
      AGENT_API_KEY: KEY,
      AGENT_API_ALLOW_INSECURE_HTTP: 'yes',
      AGENT_API_REQUEST_TIMEOUT: 'soon',
    });
    expect(error.message).toContain('AGENT_API_ALLOW_INSECURE_HTTP');
    expect(error.message).toContain('AGENT_API_REQUEST_TIMEOUT');
  });

  test('checks across two variables still run when another variable is bad, so one run lists every problem', () => {
    const error = configErrorOf({
      AGENT_API_KEY: 'mint_dsc_0123456789abcdef',
      LOG_LEVEL: 'LOUD',
      AGENT_API_BASE_URL: 'http://api.example.com',
      WORKER_SHUTDOWN_GRACE_TIME: '2s',
    });
    const listed = error.message.split('\n- ').slice(1);
    expect(listed).toEqual([
      expect.stringContaining('LOG_LEVEL must be one of'),
      expect.stringContaining('AGENT_API_KEY is an assistant key'),
      expect.stringContaining('AGENT_API_BASE_URL uses plain http://'),
      expect.stringContaining('WORKER_SHUTDOWN_GRACE_TIME (2s) must be at least AGENT_API_REQUEST_TIMEOUT (15s)'),
    ]);
  });

  test('a check across two variables is skipped when one of them is itself bad, instead of reporting nonsense', () => {
    const error = configErrorOf({
      AGENT_API_KEY: KEY,
      AGENT_API_REQUEST_TIMEOUT: 'soon',
      WORKER_SHUTDOWN_GRACE_TIME: '2s',
    });
    expect(error.message).toContain('AGENT_API_REQUEST_TIMEOUT must be a positive duration');
    expect(error.message).not.toContain('must be at least AGENT_API_REQUEST_TIMEOUT');
  });

  test.each(['1', 'true'])('the insecure-http flag %j lets plain http to a remote host through', (flag) => {
    const config = loadWorkerConfig({
      AGENT_API_KEY: KEY,
      AGENT_API_BASE_URL: 'http://api.example.com',
      AGENT_API_ALLOW_INSECURE_HTTP: flag,
    });
    expect(config.agentApi.baseUrl).toBe('http://api.example.com');
  });

  test.each(['0', 'false', ''])('the insecure-http flag %j keeps plain http to a remote host refused', (flag) => {
    const error = configErrorOf({
      AGENT_API_KEY: KEY,
      AGENT_API_BASE_URL: 'http://api.example.com',
      AGENT_API_ALLOW_INSECURE_HTTP: flag,
    });
    expect(error.message).toContain('AGENT_API_BASE_URL uses plain http://');
  });
});

describe('loadTemporalSettings', () => {
  test('an empty environment connects to a local dev server in the default namespace', () => {
    expect(loadTemporalSettings({})).toEqual({
      connectionOptions: { address: 'localhost:7233' },
      namespace: 'default',
      taskQueue: 'agent-followup',
      coordinatorTaskQueue: 'agent-followup-coordinators',
    });
  });

  test('an empty task queue variable falls back to the default queue', () => {
    expect(loadTemporalSettings({ TEMPORAL_TASK_QUEUE: '' }).taskQueue).toBe('agent-followup');
  });
});

test("AGENT_NOTIFY_URL is every follow-up's callback unless it has its own: a URL checked like notify.url, https:// off this machine", () => {
  const key = { AGENT_API_KEY: 'mint_abcdefgh12' };
  expect(loadWorkerConfig({ ...key, AGENT_NOTIFY_URL: 'https://hooks.example.com/agent' }).notify).toEqual({
    allowInsecureHttp: false,
    allowLoopback: false,
    allowPrivateNetworks: false,
    allowHosts: [],
    defaultUrl: 'https://hooks.example.com/agent',
  });
  expect(loadWorkerConfig({ ...key, AGENT_NOTIFY_URL: 'http://127.0.0.1:9000/cb' }).notify.defaultUrl).toBe(
    'http://127.0.0.1:9000/cb',
  );
  expect(() => loadWorkerConfig({ ...key, AGENT_NOTIFY_URL: 'http://hooks.example.com/agent' })).toThrow(
    /AGENT_NOTIFY_URL uses plain http:\/\/ to a host that is not this machine.*AGENT_NOTIFY_ALLOW_INSECURE_HTTP=true/,
  );
  expect(
    loadWorkerConfig({
      ...key,
      AGENT_NOTIFY_URL: 'http://hooks.example.com/agent',
      AGENT_NOTIFY_ALLOW_INSECURE_HTTP: 'true',
    }).notify.defaultUrl,
  ).toBe('http://hooks.example.com/agent');
  expect(() => loadWorkerConfig({ ...key, AGENT_NOTIFY_URL: 'https://user:pw@hooks.example.com/' })).toThrow(
    /AGENT_NOTIFY_URL.*must not contain credentials/,
  );
  expect(() => loadWorkerConfig({ ...key, AGENT_NOTIFY_URL: 'hooks.example.com' })).toThrow(
    /AGENT_NOTIFY_URL.*absolute http:\/\/ or https:\/\/ URL/,
  );
});

describe('AGENT_WATCH_SHARDS', () => {
  test('a whole number of shards sets shared watching (0 turns it off); a bad value says what to give', () => {
    expect(loadWorkerConfig({ AGENT_API_KEY: 'mint_abcdefgh12', AGENT_WATCH_SHARDS: '8' }).watchShards).toBe(8);
    expect(loadWorkerConfig({ AGENT_API_KEY: 'mint_abcdefgh12', AGENT_WATCH_SHARDS: '0' }).watchShards).toBe(0);
    expect(() => loadWorkerConfig({ AGENT_API_KEY: 'mint_abcdefgh12', AGENT_WATCH_SHARDS: 'many' })).toThrow(
      /AGENT_WATCH_SHARDS.*whole number of shards/,
    );
    expect(() => loadWorkerConfig({ AGENT_API_KEY: 'mint_abcdefgh12', AGENT_WATCH_SHARDS: '-1' })).toThrow(
      /AGENT_WATCH_SHARDS must be a whole number of shards from 0 to 1024/,
    );
    expect(() => loadWorkerConfig({ AGENT_API_KEY: 'mint_abcdefgh12', AGENT_WATCH_SHARDS: '2.5' })).toThrow(
      /AGENT_WATCH_SHARDS must be a whole number of shards/,
    );
  });
});
