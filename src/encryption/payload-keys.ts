/**
 * The one setting that turns payload encryption on, for the worker, the client, the CLI and the codec server alike:
 * AGENT_PAYLOAD_KEYS, a comma-separated list of `id:base64key` (32-byte AES-256 keys). The first key encrypts; every
 * listed key decrypts. No message here ever quotes a key.
 */
import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec, type EncryptionKey } from './aes-gcm-codec';

/**
 * The module whose `failureConverter` encodes failure messages with the payloads: Temporal loads failure converters
 * by path (the workflow bundle needs it so), so clients and workers name it by path too.
 */
export const FAILURE_CONVERTER_PATH = require.resolve('./failure-converter');

/** The environment variable that holds the keys. */
export const PAYLOAD_KEYS_VARIABLE = 'AGENT_PAYLOAD_KEYS';

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const HOW_TO =
  `${PAYLOAD_KEYS_VARIABLE} takes a comma-separated list of id:key, each key 32 random bytes in base64 ` +
  `(e.g. 2026-11:$(openssl rand -base64 32)); the first key encrypts, all of them decrypt`;

/** A bad AGENT_PAYLOAD_KEYS: the message lists what is wrong and how to write it, never a key. */
export class PayloadKeysError extends Error {
  override readonly name = 'PayloadKeysError';
}

/** Parses the keys' text; throws PayloadKeysError listing every problem. */
export function parsePayloadKeys(text: string): EncryptionKey[] {
  const problems: string[] = [];
  const keys: EncryptionKey[] = [];
  const entries = text.split(',').map((entry) => entry.trim());
  entries.forEach((entry, index) => {
    const where = `entry ${index + 1} of ${entries.length}`;
    const colon = entry.indexOf(':');
    if (colon < 0) {
      problems.push(`${where} has no "id:" in front of its key`);
      return;
    }
    const id = entry.slice(0, colon);
    const encoded = entry.slice(colon + 1);
    if (!KEY_ID.test(id)) {
      problems.push(`${where} has an id that is not 1-64 letters, digits, ".", "_" or "-"`);
      return;
    }
    const key = Buffer.from(encoded, 'base64');
    // Node's decoder skips what is not base64; re-encoding tells a real key from text that only looks like one.
    if (key.length !== 32 || key.toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) {
      problems.push(`the key of '${id}' is not 32 bytes in base64`);
      return;
    }
    if (keys.some((known) => known.id === id)) {
      problems.push(`the id '${id}' is given twice`);
      return;
    }
    keys.push({ id, key });
  });
  if (problems.length > 0)
    throw new PayloadKeysError(`${PAYLOAD_KEYS_VARIABLE} is invalid: ${problems.join('; ')}. ${HOW_TO}`);
  return keys;
}

/** The codec AGENT_PAYLOAD_KEYS asks for, or undefined when it is unset (payloads stay in clear). */
export function payloadCodecFromEnvironment(
  env: Record<string, string | undefined> = process.env,
): AesGcmPayloadCodec | undefined {
  const text = env[PAYLOAD_KEYS_VARIABLE];
  if (text === undefined || text.trim() === '') return undefined;
  return new AesGcmPayloadCodec(parsePayloadKeys(text));
}

/**
 * A data converter with the environment's codec and failure messages encoded with the payloads, or undefined
 * without one: what clients and workers take.
 */
export function dataConverterFromEnvironment(
  env: Record<string, string | undefined> = process.env,
): DataConverter | undefined {
  const codec = payloadCodecFromEnvironment(env);
  return codec ? { payloadCodecs: [codec], failureConverterPath: FAILURE_CONVERTER_PATH } : undefined;
}

/** The key material in AGENT_PAYLOAD_KEYS, for the log redaction list. */
export function payloadKeySecrets(env: Record<string, string | undefined> = process.env): string[] {
  const text = env[PAYLOAD_KEYS_VARIABLE];
  if (!text) return [];
  return text
    .split(',')
    .map((entry) => entry.slice(entry.indexOf(':') + 1).trim())
    .filter((secret) => secret.length >= 8);
}
