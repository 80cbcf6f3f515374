/**
 * Prompts encrypted at rest: a payload codec (AES-256-GCM) that the worker, the client, the CLI and the codec server
 * share. Every payload our workflows write (input, results, activity arguments, heartbeat details, memo, the Web UI's
 * summary and details) leaves the process encrypted under the current key; a payload names its key by id, so rotation
 * is adding a key in front and keeping the old ones until nothing running was written with them. Search attributes
 * are not payloads the codec sees (Temporal indexes them in clear), and ours hold no prompt text.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { ValueError, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

/** One AES-256 key: a 32-byte secret and the id payloads written with it carry. */
export interface EncryptionKey {
  id: string;
  key: Uint8Array;
}

/** The `encoding` of an encrypted payload (Temporal's convention for codec output: `binary/...`). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata naming the key a payload was encrypted with. */
export const KEY_ID_METADATA = 'encryption-key-id';

const CIPHER = 'aes-256-gcm';
/** HKDF's `info`: a key for ids only, apart from the one that encrypts. */
const WORKFLOW_ID_KEY_INFO = 'agent-followup workflow id digest v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Thrown when a payload cannot be decrypted: a key this process was not given, or bytes that are not ours. */
export class PayloadDecryptionError extends ValueError {
  override readonly name = 'PayloadDecryptionError';
}

/**
 * Encrypts with the first key, decrypts with whichever key a payload names. Payloads written before encryption was
 * turned on (no key id) pass through as they are, so a namespace can switch to it with follow-ups running.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  private readonly keys: ReadonlyMap<string, Uint8Array>;
  private readonly current: EncryptionKey;

  constructor(keys: readonly EncryptionKey[]) {
    const [current] = keys;
    if (!current) throw new ValueError('AesGcmPayloadCodec needs at least one key');
    for (const { id, key } of keys) {
      if (key.length !== 32) throw new ValueError(`encryption key '${id}' is not 32 bytes (AES-256)`);
    }
    this.current = current;
    this.keys = new Map(keys.map(({ id, key }) => [id, key]));
  }

  /**
   * The key of the follow-ups' default ids (client/ids.ts): HKDF-SHA256 from the key whose id sorts first, not the
   * current one, so the two-step rotation (add the new key after, then move it in front) keeps every input's id and a
   * retried start still attaches. Only removing that key, or adding one whose id sorts before it, changes the ids.
   */
  workflowIdKey(): Uint8Array {
    const [first] = [...this.keys.keys()].sort();
    const key = this.keys.get(first ?? this.current.id) ?? this.current.key;
    return new Uint8Array(hkdfSync('sha256', key, new Uint8Array(), WORKFLOW_ID_KEY_INFO, 32));
  }

  /** The id new payloads are encrypted with. */
  get currentKeyId(): string {
    return this.current.id;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.encrypt(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.decrypt(payload));
  }

  private encrypt(payload: Payload): Payload {
    const { id, key } = this.current;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, key, iv);
    // The key id is authenticated too: a payload relabelled with another id does not decrypt.
    cipher.setAAD(encoder.encode(id));
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const data = Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { encoding: encoder.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: encoder.encode(id) },
      data,
    };
  }

  private decrypt(payload: Payload): Payload {
    const encoding = payload.metadata?.encoding;
    if (!encoding || decoder.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
    const idBytes = payload.metadata?.[KEY_ID_METADATA];
    const id = idBytes ? decoder.decode(idBytes) : '';
    const key = this.keys.get(id);
    if (!key) {
      throw new PayloadDecryptionError(
        `a payload is encrypted with key '${id}', which this process does not have: add it to AGENT_PAYLOAD_KEYS ` +
          `(after the current key '${this.current.id}'); keep every key until nothing running was written with it`,
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptionError(`an encrypted payload is too short`);
    try {
      const decipher = createDecipheriv(CIPHER, key, data.subarray(0, IV_BYTES));
      decipher.setAAD(encoder.encode(id));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return temporal.api.common.v1.Payload.decode(plain) as Payload;
    } catch {
      throw new PayloadDecryptionError(
        `a payload marked as encrypted with key '${id}' does not decrypt with that key: the key under that id changed, ` +
          `or the payload was altered`,
      );
    }
  }
}
