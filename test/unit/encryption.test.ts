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

const PROMPT = 'Customer Jane Roe asked: rename the billing module';
const keyA = randomBytes(32);
const keyB = randomBytes(32);
const text = (...keys: [string, Buffer][]) => keys.map(([id, key]) => `${id}:${key.toString('base64')}`).join(',');
const decoded = (bytes: Uint8Array | null | undefined) => new TextDecoder().decode(bytes ?? new Uint8Array());

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
