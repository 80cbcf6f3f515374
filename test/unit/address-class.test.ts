/**
 * Where a URL may aim the worker (issue 73 point 4): the address classes, v4 and v6, mapped and in the other forms a
 * URL parser takes; the metadata names; the input check a start goes through; and the connection guard's verdict
 * under each allow setting, with a test resolver (nothing is looked up for real).
 */
import type { LookupAddress } from 'node:dns';
import { classifyAddress, literalHostProblem } from '../../src/kernel/address-class';
import { inspectFollowUpInput, notifyProblem } from '../../src/kernel/request';
import { addressRefusal, guardedLookup, urlTargetRefusal, type AddressPolicy } from '../../src/address-guard';
import { loadWorkerConfig } from '../../src/config';

describe('classifyAddress', () => {
  test.each([
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.5', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fd00::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['100.64.0.1', 'cgnat'],
    ['100.127.255.254', 'cgnat'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:10.0.0.5', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a00:5', 'private'],
    ['64:ff9b::a00:5', 'reserved'],
    ['2002:a00:5::', 'reserved'],
    ['192.0.0.8', 'reserved'],
    // The forms a URL parser reads as IPv4: hex, octal, fewer parts, one number.
    ['0x7f.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['0xa9.0xfe.0xa9.0xfe', 'link-local'],
    ['012.0.0.5', 'private'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  test('172.15/16 and 172.32/16 are public, beside the private 172.16/12', () => {
    expect(classifyAddress('172.15.0.1')).toBe('public');
    expect(classifyAddress('172.32.0.1')).toBe('public');
  });
});

describe('a follow-up input naming an internal place', () => {
  test.each([
    ['https://169.254.169.254/latest/meta-data/iam/', 'link-local'],
    ['https://10.0.0.5:8443/admin', 'private-network'],
    ['https://172.20.1.1/', 'private-network'],
    ['https://192.168.0.10/', 'private-network'],
    ['https://[fd00::1]/', 'unique-local'],
    ['https://[fe80::1]/', 'link-local'],
    ['https://100.64.0.1/', 'carrier-grade NAT'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://0.0.0.0:9090/', 'unspecified'],
    ['https://[::]/', 'unspecified'],
    ['https://[::ffff:10.0.0.5]/', 'private-network'],
    ['https://[::ffff:a9fe:a9fe]/', 'link-local'],
    ['https://0xa9fea9fe/', 'link-local'],
    ['https://167772165/', 'private-network'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'cloud metadata service'],
    ['https://METADATA.google.internal./x', 'cloud metadata service'],
    ['http://metadata/x', 'cloud metadata service'],
    ['https://instance-data/latest/', 'cloud metadata service'],
    ['https://%31%30.0.0.5/', 'plain DNS name or IP address'],
    ['https://１０.0.0.5/', 'plain DNS name or IP address'],
    ['https://hooks.1/', 'ends in a number'],
  ])('%s is refused at input (%s), by the same check the workflow runs', (url, reason) => {
    const problem = notifyProblem({ url });
    expect(problem).toContain(reason);
    const checked = inspectFollowUpInput({ projectId: 'p', jobId: 'j', prompt: 'x', notify: { url } });
    expect(checked).toEqual({ ok: false, problems: [{ field: 'notify.url', message: problem }] });
  });

  test.each([
    'https://hooks.example.com/agent',
    'https://8.8.8.8/hook',
    'https://[2606:4700::1111]:8443/hook',
    'http://127.0.0.1:9000/hook',
    'http://localhost:9000/hook',
    'http://[::1]:9000/hook',
  ])('%s passes the input check (public, or loopback: the worker decides)', (url) => {
    expect(notifyProblem({ url })).toBeUndefined();
  });

  test('a refusal names the class, the host and the settings that allow a receiver on a private network', () => {
    expect(literalHostProblem('10.0.0.5', 'notify.url')).toBe(
      'notify.url must not aim at a private-network address (10/8, 172.16/12, 192.168/16) (10.0.0.5): callbacks go ' +
        'to public receivers; a receiver on a private network is named by DNS and allowed on the workers ' +
        '(AGENT_NOTIFY_ALLOW_PRIVATE_NETWORKS or AGENT_NOTIFY_ALLOW_HOSTS)',
    );
  });
});

describe("the worker's connection guard", () => {
  const strict: AddressPolicy = { settingPrefix: 'AGENT_NOTIFY_ALLOW' };

  test.each([
    ['127.0.0.1', 'AGENT_NOTIFY_ALLOW_LOOPBACK=true'],
    ['::1', 'AGENT_NOTIFY_ALLOW_LOOPBACK=true'],
    ['10.0.0.5', 'AGENT_NOTIFY_ALLOW_PRIVATE_NETWORKS=true'],
    ['fd00::1', 'AGENT_NOTIFY_ALLOW_PRIVATE_NETWORKS=true'],
    ['100.64.0.1', 'AGENT_NOTIFY_ALLOW_PRIVATE_NETWORKS=true'],
    ['169.254.169.254', 'link-local'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
  ])('refuses %s by default and says what allows it (%s)', (address, said) => {
    expect(addressRefusal(address, 'hooks.example.com', strict)).toContain(said);
  });

  test('each setting allows its own class and no other; the metadata names and link-local never', () => {
    const loopback = { ...strict, allowLoopback: true };
    expect(addressRefusal('127.0.0.1', 'localhost', loopback)).toBeUndefined();
    expect(addressRefusal('10.0.0.5', 'x.example', loopback)).toBeDefined();
    const privateNets = { ...strict, allowPrivateNetworks: true };
    expect(addressRefusal('10.0.0.5', 'x.example', privateNets)).toBeUndefined();
    expect(addressRefusal('fd00::1', 'x.example', privateNets)).toBeUndefined();
    expect(addressRefusal('127.0.0.1', 'x.example', privateNets)).toBeDefined();
    expect(addressRefusal('169.254.169.254', 'x.example', privateNets)).toBeDefined();
    const listed = { ...strict, allowHosts: ['hooks.corp.example', '10.20.0.0/16'] };
    expect(addressRefusal('10.99.0.1', 'hooks.corp.example', listed)).toBeUndefined();
    expect(addressRefusal('10.20.3.4', 'other.example', listed)).toBeUndefined();
    expect(addressRefusal('10.21.3.4', 'other.example', listed)).toBeDefined();
    const listedLinkLocal = { ...strict, allowHosts: ['169.254.0.0/16', 'meta.example'] };
    expect(addressRefusal('169.254.169.254', 'meta.example', listedLinkLocal)).toContain('link-local');
    expect(addressRefusal('8.8.8.8', 'metadata.google.internal', { ...listed, allowPrivateNetworks: true })).toContain(
      'metadata',
    );
    expect(urlTargetRefusal(new URL('https://[fd00::1]/'), strict)).toContain('unique-local');
    expect(urlTargetRefusal(new URL('https://hooks.example.com/'), strict)).toBeUndefined();
  });

  test('the lookup refuses a name when any address it resolves to is refused, and passes public ones on', async () => {
    const names: Record<string, { address: string; family: number }[]> = {
      'rebound.example': [
        { address: '8.8.8.8', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ],
      'public.example': [{ address: '2606:4700::1111', family: 6 }],
    };
    const lookup = guardedLookup(strict, async (name) => names[name] ?? []);
    const ask = (name: string, all: boolean) =>
      new Promise<{ error: Error | null; address: string | LookupAddress[] }>((resolve) =>
        lookup(name, { all }, (error, address) => resolve({ error, address })),
      );
    const rebound = await ask('rebound.example', true);
    expect(rebound.error).toMatchObject({ code: 'ETARGETREFUSED' });
    expect(rebound.error?.message).toContain('rebound.example (10.0.0.5)');
    expect(await ask('public.example', true)).toEqual({
      error: null,
      address: [{ address: '2606:4700::1111', family: 6 }],
    });
    expect(await ask('public.example', false)).toEqual({ error: null, address: '2606:4700::1111' });
    expect((await ask('nowhere.example', false)).error).toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('AGENT_NOTIFY_ALLOW_* settings', () => {
  const base = { AGENT_API_KEY: 'mint_abcdefgh12345678' };

  test('read into the notify settings, none allowed by default', () => {
    expect(loadWorkerConfig(base).notify).toMatchObject({
      allowLoopback: false,
      allowPrivateNetworks: false,
      allowHosts: [],
    });
    expect(
      loadWorkerConfig({
        ...base,
        AGENT_NOTIFY_ALLOW_LOOPBACK: 'true',
        AGENT_NOTIFY_ALLOW_PRIVATE_NETWORKS: '1',
        AGENT_NOTIFY_ALLOW_HOSTS: ' hooks.corp.example, 10.20.0.0/16 ,fd00:1::/32',
      }).notify,
    ).toMatchObject({
      allowLoopback: true,
      allowPrivateNetworks: true,
      allowHosts: ['hooks.corp.example', '10.20.0.0/16', 'fd00:1::/32'],
    });
  });

  test.each([
    ['AGENT_NOTIFY_ALLOW_LOOPBACK', 'yes', 'must be true or false'],
    ['AGENT_NOTIFY_ALLOW_HOSTS', '10.0.0.0/33', '"10.0.0.0/33" is not a CIDR block'],
    ['AGENT_NOTIFY_ALLOW_HOSTS', 'metadata.google.internal', 'cannot be allowed'],
    ['AGENT_NOTIFY_ALLOW_HOSTS', 'hooks example', 'is not a host name'],
    ['AGENT_NOTIFY_URL', 'https://10.0.0.5/hook', 'must not aim at a private-network address'],
  ])('%s=%s is refused at start-up: %s', (name, value, said) => {
    expect(() => loadWorkerConfig({ ...base, [name]: value })).toThrow(said);
  });
});
