import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter } from '@temporalio/common';
import {
  AesGcmPayloadCodec,
  dataConverterFromEnvironment,
  ENCRYPTED_ENCODING,
  KEY_ID_METADATA,
  parsePayloadKeys,
  PayloadDecryptionError,
  PayloadKeysError,
} from '../../src/encryption';
import { ConfigError, loadWorkerConfig } from '../../src/config';
import { Client } from '@temporalio/client';
import { DefaultFailureConverter, type ApplicationFailure } from '@temporalio/common';
import { bodyExcerpt, failureForStatus, PROMPT_ECHO } from '../../src/agent-api/errors';
import { FollowUpClient, followUpWorkflowId, tupleDigest } from '../../src/client';
import { failureConverter } from '../../src/encryption/failure-converter';
import { KeylessPayloadCodec } from '../../src/encryption/keyless-codec';

const PROMPT = 'Customer Jane Roe asked: rename the billing module';
const keyA = randomBytes(32);
const keyB = randomBytes(32);
const text = (...keys: [string, Buffer][]) => keys.map(([id, key]) => `${id}:${key.toString('base64')}`).join(',');
const decoded = (bytes: Uint8Array | null | undefined) => new TextDecoder().decode(bytes ?? new Uint8Array());

describe('a client without keys', () => {
  it("says an encrypted payload is one, naming its key and the fix, instead of the SDK's 'Unknown encoding'", async () => {
    const [encrypted] = await new AesGcmPayloadCodec(parsePayloadKeys(text(['2026-11', keyA]))).encode([
      defaultPayloadConverter.toPayload({ prompt: PROMPT }),
    ]);
    const clear = defaultPayloadConverter.toPayload({ status: 'active' });
    const keyless = new KeylessPayloadCodec();
    await expect(keyless.decode([clear, encrypted!])).rejects.toThrow(
      new PayloadDecryptionError(
        "this follow-up's payloads are encrypted with key '2026-11', and this process has no AGENT_PAYLOAD_KEYS: set it " +
          'as the workers have it (at least that key) to read them (docs/ENCRYPTION.md); the Web UI reads them through ' +
          '`agent-followup codec-server`',
      ),
    );
    // In clear both ways: what it writes, and what it reads.
    expect(await keyless.decode([clear])).toEqual([clear]);
    expect(await keyless.encode([clear])).toEqual([clear]);
  });
});

describe('the AES-256-GCM payload codec', () => {
  it('encrypts with the first key so the prompt is nowhere in the bytes, and decodes to the same payload', async () => {
    const codec = new AesGcmPayloadCodec(parsePayloadKeys(text(['a', keyA], ['b', keyB])));
    const payload = defaultPayloadConverter.toPayload({ prompt: PROMPT });
    const [encrypted] = await codec.encode([payload]);
    expect(decoded(encrypted?.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(decoded(encrypted?.metadata?.[KEY_ID_METADATA])).toBe('a');
    expect(Buffer.from(encrypted?.data ?? []).includes(Buffer.from('Jane Roe'))).toBe(false);
    const [back] = await codec.decode([encrypted!]);
    expect(defaultPayloadConverter.fromPayload(back!)).toEqual({ prompt: PROMPT });
  });

  it('after rotation decrypts payloads of the old key and writes new ones with the new key', async () => {
    const before = new AesGcmPayloadCodec(parsePayloadKeys(text(['a', keyA])));
    const after = new AesGcmPayloadCodec(parsePayloadKeys(text(['b', keyB], ['a', keyA])));
    const [old] = await before.encode([defaultPayloadConverter.toPayload(PROMPT)]);
    expect(defaultPayloadConverter.fromPayload((await after.decode([old!]))[0]!)).toBe(PROMPT);
    const [fresh] = await after.encode([defaultPayloadConverter.toPayload(PROMPT)]);
    expect(decoded(fresh?.metadata?.[KEY_ID_METADATA])).toBe('b');
  });

  it('leaves payloads written before encryption was turned on as they are', async () => {
    const codec = new AesGcmPayloadCodec(parsePayloadKeys(text(['a', keyA])));
    const clear = defaultPayloadConverter.toPayload(PROMPT);
    expect(await codec.decode([clear])).toEqual([clear]);
  });

  it('refuses a payload of a key it lacks, a relabelled key id and altered bytes, naming the fix but no key', async () => {
    const writer = new AesGcmPayloadCodec(parsePayloadKeys(text(['a', keyA], ['b', keyB])));
    const readerWithoutA = new AesGcmPayloadCodec(parsePayloadKeys(text(['b', keyB])));
    const [encrypted] = await writer.encode([defaultPayloadConverter.toPayload(PROMPT)]);
    await expect(readerWithoutA.decode([encrypted!])).rejects.toThrow(
      /encrypted with key 'a', which this process does not have: add it to AGENT_PAYLOAD_KEYS/,
    );
    const relabelled = {
      ...encrypted!,
      metadata: { ...encrypted!.metadata, [KEY_ID_METADATA]: new TextEncoder().encode('b') },
    };
    await expect(writer.decode([relabelled])).rejects.toBeInstanceOf(PayloadDecryptionError);
    const data = Buffer.from(encrypted!.data!);
    data[20] = (data[20] ?? 0) ^ 1;
    await expect(writer.decode([{ ...encrypted!, data }])).rejects.toThrow(/does not decrypt with that key/);
  });
});

describe('AGENT_PAYLOAD_KEYS', () => {
  it('lists every problem at once without quoting a key', () => {
    const short = randomBytes(16).toString('base64');
    const bad = `nocolon,bad id:${keyA.toString('base64')},x:${short},a:${keyA.toString('base64')},a:${keyB.toString('base64')}`;
    let message = '';
    try {
      parsePayloadKeys(bad);
    } catch (error) {
      expect(error).toBeInstanceOf(PayloadKeysError);
      message = (error as Error).message;
    }
    expect(message).toContain('entry 1 of 5 has no "id:"');
    expect(message).toContain('entry 2 of 5 has an id that is not');
    expect(message).toContain("the key of 'x' is not 32 bytes in base64");
    expect(message).toContain("the id 'a' is given twice");
    expect(message).toContain('openssl rand -base64 32');
    for (const secret of [short, keyA.toString('base64'), keyB.toString('base64')])
      expect(message).not.toContain(secret);
  });

  it('unset or empty leaves payloads in clear', () => {
    expect(dataConverterFromEnvironment({})).toBeUndefined();
    expect(dataConverterFromEnvironment({ AGENT_PAYLOAD_KEYS: ' ' })).toBeUndefined();
    expect(dataConverterFromEnvironment({ AGENT_PAYLOAD_KEYS: text(['a', keyA]) })?.payloadCodecs).toHaveLength(1);
  });

  it("is one of the worker's settings: a bad value is a configuration problem listed with the others", () => {
    const env = { AGENT_API_KEY: 'mint_test_config_key_0001', AGENT_PAYLOAD_KEYS: 'a:notakey' };
    expect(() => loadWorkerConfig(env)).toThrow(ConfigError);
    expect(() => loadWorkerConfig(env)).toThrow(/AGENT_PAYLOAD_KEYS is invalid: the key of 'a' is not 32 bytes/);
    const good = loadWorkerConfig({ ...env, AGENT_PAYLOAD_KEYS: text(['k1', keyA]) });
    expect(good.payloadKeys?.map((key) => key.id)).toEqual(['k1']);
  });
});

/** A dictionary an attacker would try: 14,000-odd short replies a person gives an agent, the real one among them. */
function shortPhrases(): string[] {
  const openers = ['', 'yes, ', 'ok, ', 'no, ', 'please ', 'now ', 'great, ', 'thanks, ', 'sure, ', 'lgtm, '];
  const verbs = ['merge', 'ship', 'fix', 'revert', 'close', 'rebase', 'squash', 'update', 'test', 'deploy', 'review'];
  const objects = [
    'it',
    'this',
    'the PR',
    'the branch',
    'the tests',
    'the docs',
    'the lint',
    'main',
    'that',
    'both',
    'the fix',
  ];
  const endings = ['', '.', '!', ' now', ' please', ' asap', ' today', ' again', ' first', ' later', ' too', ' then'];
  const phrases: string[] = [];
  for (const opener of openers)
    for (const verb of verbs)
      for (const object of objects) for (const ending of endings) phrases.push(`${opener}${verb} ${object}${ending}`);
  return phrases;
}

/** What an attacker who reads ids does: the phrase whose plain digest each id ends with. */
function recoverPrompts(ids: string[], refs: { projectId: string; jobId: string }[], dictionary: string[]): string[] {
  return ids.flatMap((id, index) => {
    const ref = refs[index]!;
    const digest = id.slice(id.lastIndexOf('/') + 1);
    return dictionary.filter((prompt) => tupleDigest({ ...ref, prompt }) === digest);
  });
}

describe('default workflow ids with payload encryption', () => {
  const prompt = 'yes, merge it';
  const refs = [1, 2, 3].map((n) => ({ projectId: `proj-${n}`, jobId: `job-${n}` }));
  const dictionary = shortPhrases();
  const clientWith = (codecs: AesGcmPayloadCodec[]) =>
    new FollowUpClient(new Client({ dataConverter: { payloadCodecs: codecs } }), { taskQueue: 'ids' });

  it('without a key an id gives its prompt away to a dictionary (no secrecy is promised then)', () => {
    expect(dictionary.length).toBeGreaterThan(14_000);
    expect(dictionary).toContain(prompt);
    const ids = refs.map((ref) => clientWith([]).defaultWorkflowId({ ...ref, prompt }));
    expect(ids).toEqual(refs.map((ref) => followUpWorkflowId({ ...ref, prompt })));
    expect(recoverPrompts(ids, refs, dictionary)).toEqual([prompt, prompt, prompt]);
  });

  it('with a key the same dictionary recovers nothing from the ids, and the ids keep their shape', () => {
    const client = clientWith([new AesGcmPayloadCodec(parsePayloadKeys(text(['k1', keyA])))]);
    const ids = refs.map((ref) => client.defaultWorkflowId({ ...ref, prompt }));
    expect(recoverPrompts(ids, refs, dictionary)).toEqual([]);
    for (const [index, id] of ids.entries())
      expect(id).toMatch(new RegExp(`^agent-followup/${refs[index]!.projectId}/${refs[index]!.jobId}/[0-9a-f]{16}$`));
    // The same input keeps its id, so a retried start attaches; another prompt gets another one.
    expect(client.defaultWorkflowId({ ...refs[0]!, prompt })).toBe(ids[0]);
    expect(client.defaultWorkflowId({ ...refs[0]!, prompt: 'no, merge it' })).not.toBe(ids[0]);
  });

  it('keeps every id through both steps of a key rotation, and differs under another deployment key', () => {
    const input = { ...refs[0]!, prompt };
    const idWith = (...keys: [string, Buffer][]) =>
      clientWith([new AesGcmPayloadCodec(parsePayloadKeys(text(...keys)))]).defaultWorkflowId(input);
    const before = idWith(['2026-11', keyA]);
    expect(idWith(['2026-11', keyA], ['2027-01', keyB])).toBe(before);
    expect(idWith(['2027-01', keyB], ['2026-11', keyA])).toBe(before);
    expect(idWith(['2026-11', keyB])).not.toBe(before);
  });
});

describe("the agent API's error excerpts", () => {
  const prompt = 'Customer Jane Roe: refund order 4411';

  it('never quote the prompt, in whatever common form an API echoes it', () => {
    const bodies = [
      `invalid prompt: ${prompt}`,
      JSON.stringify({ error: `invalid prompt: ${JSON.stringify(prompt)}` }),
      `invalid prompt: ${encodeURIComponent(prompt)}`,
      `invalid prompt: ${Buffer.from(prompt).toString('base64')}`,
      `invalid prompt:\n  ${prompt.replace(/ /g, '\n ')}`,
    ];
    for (const body of bodies) {
      const excerpt = bodyExcerpt(body, [], 300, prompt);
      expect(excerpt).toContain(PROMPT_ECHO);
      expect(excerpt).not.toContain('Jane');
      expect(excerpt).not.toContain('4411');
    }
    expect(bodyExcerpt('invalid prompt: too long', [], 300, prompt)).toBe('invalid prompt: too long');
  });

  it('leave a prompt of a few letters alone rather than shred every word that holds them', () => {
    expect(bodyExcerpt('prompt is too short', [], 300, 'to')).toBe('prompt is too short');
  });
});

describe('failure messages with payload encryption', () => {
  it('move into the encoded attributes, which the codec encrypts, and read back with any default converter', async () => {
    const codec = new AesGcmPayloadCodec(parsePayloadKeys(text(['k1', keyA])));
    const failure = failureForStatus(
      400,
      { operation: 'send follow-up message', projectId: 'p', jobId: 'j' },
      'invalid prompt: Customer Jane Roe',
      undefined,
    );
    const proto = failureConverter.errorToFailure(failure, defaultPayloadConverter);
    expect(proto.message).not.toContain('Jane');
    const [encrypted] = await codec.encode([proto.encodedAttributes!]);
    expect(decoded(encrypted!.data)).not.toContain('Jane');
    const [back] = await codec.decode([encrypted!]);
    const read = new DefaultFailureConverter().failureToError(
      { ...proto, encodedAttributes: back! },
      defaultPayloadConverter,
    ) as ApplicationFailure;
    expect(read.message).toContain('Customer Jane Roe');
    expect(read.type).toBe('AgentApiBadRequest');
  });

  it('are encoded by the data converter AGENT_PAYLOAD_KEYS asks for', () => {
    const converter = dataConverterFromEnvironment({ AGENT_PAYLOAD_KEYS: text(['a', keyA]) });
    expect(converter?.failureConverterPath).toBe(require.resolve('../../src/encryption/failure-converter'));
  });
});
