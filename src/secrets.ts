/**
 * The one place that knows how a secret can show up in text we write, and keeps it out. Used by the HTTP client (API
 * error bodies and job fields, before they become failure messages or results in history) and by the log writer
 * (every line). Two steps:
 * - `secretRedactor` cuts out the forms a secret most often takes (as written, JSON-escaped once and twice,
 *   URL-encoded, base64), so an ordinary echo leaves a readable text with [REDACTED] in it;
 * - `secretDetector` then decides whether the secret is still in there under any common transformation, without a
 *   list of forms: it decodes the text every way that could hide it (percent-encoding, repeatedly and as a form; JSON
 *   and HTML escapes), compares case-folded (hex digits and percent-escapes have no case), and looks for the secret's
 *   hex and its base64 at every byte alignment. What it finds is withheld whole (`scrubSecrets`), since no one can
 *   say which characters of an encoded text are the secret.
 */

/** What replaces a secret. */
export const REDACTED = '[REDACTED]';

/** Secrets shorter than this are not redacted: replacing them would shred ordinary words. */
const MIN_SECRET_LENGTH = 4;

/** The secrets in an API key: the whole key, and the secret after its prefix (an API may echo either). */
export function apiKeySecrets(apiKey: string | undefined): string[] {
  if (!apiKey) return [];
  const underscore = apiKey.indexOf('_');
  return underscore >= 0 ? [apiKey, apiKey.slice(underscore + 1)] : [apiKey];
}

/** Every form of each secret, longest first (so a whole key goes before its secret part could split it). */
export function secretForms(secrets: readonly string[]): string[] {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    const escapedOnce = JSON.stringify(secret).slice(1, -1);
    forms.add(secret);
    forms.add(escapedOnce);
    forms.add(JSON.stringify(escapedOnce).slice(1, -1));
    forms.add(encodeURIComponent(secret));
    forms.add(Buffer.from(secret, 'utf8').toString('base64'));
    forms.add(Buffer.from(secret, 'utf8').toString('base64url'));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** A function that replaces every form of every secret in a text with [REDACTED]. */
export function secretRedactor(secrets: readonly string[]): (text: string) => string {
  const forms = secretForms(secrets);
  return (text) => forms.reduce((out, form) => (out.includes(form) ? out.split(form).join(REDACTED) : out), text);
}

/** What replaces a text that still holds a secret in an encoded form. */
export const WITHHELD = '[WITHHELD: it held the API key in an encoded form]';

/** Secrets shorter than this are only redacted, never detected: decoded or case-folded they match ordinary text. */
const MIN_ENCODED_SECRET_LENGTH = 8;
/** Decoding rounds: a key encoded three times over (say JSON in a percent-encoded form value) is still found. */
const MAX_DECODE_ROUNDS = 4;
/** Distinct decoded variants of one text looked at, at most (each decoder can only shorten or keep a text). */
const MAX_VARIANTS = 64;

/** Whether a text holds any of the secrets, in any form `scrubSecrets` must withhold. */
export function secretDetector(secrets: readonly string[]): (text: string) => boolean {
  // A short secret case-folded or decoded out of ordinary text would withhold ordinary lines: only the redactor's
  // exact forms apply to it.
  const needles = secrets.filter((secret) => secret.length >= MIN_ENCODED_SECRET_LENGTH).map(secretNeedles);
  if (needles.length === 0) return () => false;
  return (text) => {
    for (const variant of decodedVariants(text)) {
      const folded = variant.toLowerCase();
      for (const needle of needles) {
        if (folded.includes(needle.folded)) return true;
        if (folded.includes(needle.hex)) return true;
        if (needle.base64.some((core) => variant.includes(core))) return true;
      }
    }
    return false;
  };
}

/**
 * Redacts the usual forms, then withholds the whole text if a secret is still in it: what reaches history, logs and
 * errors from the API goes through this.
 */
export function scrubSecrets(secrets: readonly string[]): (text: string) => string {
  const redact = secretRedactor(secrets);
  const detect = secretDetector(secrets);
  return (text) => {
    const redacted = redact(text);
    return detect(redacted) ? WITHHELD : redacted;
  };
}

interface SecretNeedles {
  folded: string;
  hex: string;
  /** The base64 characters that depend on the secret's bytes alone, for each of the 3 alignments, both alphabets. */
  base64: string[];
}

function secretNeedles(secret: string): SecretNeedles {
  const bytes = Buffer.from(secret, 'utf8');
  const base64: string[] = [];
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    // Characters before `start` carry bits of the bytes before the secret; from `end` on, of the bytes after it.
    const start = Math.ceil((offset * 4) / 3);
    const end = Math.floor(((offset + bytes.length) * 4) / 3);
    const core = encoded.slice(start, end);
    base64.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return { folded: secret.toLowerCase(), hex: bytes.toString('hex'), base64 };
}

/** The text and every text its decoders make of it, rounds deep: percent, form, JSON and HTML unescaping. */
function decodedVariants(text: string): string[] {
  const seen = new Set<string>([text]);
  let frontier = [text];
  for (let round = 0; round < MAX_DECODE_ROUNDS && frontier.length > 0; round += 1) {
    const next: string[] = [];
    for (const variant of frontier) {
      for (const decode of DECODERS) {
        const decoded = decode(variant);
        if (seen.has(decoded) || seen.size >= MAX_VARIANTS) continue;
        seen.add(decoded);
        next.push(decoded);
      }
    }
    frontier = next;
  }
  return [...seen];
}

const DECODERS: ReadonlyArray<(text: string) => string> = [
  percentDecode,
  (text) => percentDecode(text.replace(/\+/g, ' ')),
  jsonUnescape,
  htmlUnescape,
];

/** Decodes every run of %XX escapes (as UTF-8 when it is, else byte by byte); leaves the rest as it is. */
function percentDecode(text: string): string {
  return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return Buffer.from(run.replace(/%/g, ''), 'hex').toString('latin1');
    }
  });
}

/** Undoes JSON (and JavaScript) string escapes: \uXXXX, \xXX, \" \\ \/ and the control letters. */
function jsonUnescape(text: string): string {
  return text.replace(
    /\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(["\\/'])|([bfnrt]))/g,
    (_match, unicode?: string, hex?: string, literal?: string, control?: string) => {
      if (unicode) return String.fromCharCode(parseInt(unicode, 16));
      if (hex) return String.fromCharCode(parseInt(hex, 16));
      if (literal) return literal;
      return CONTROL_ESCAPES[control as keyof typeof CONTROL_ESCAPES];
    },
  );
}

const CONTROL_ESCAPES = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' } as const;

/** Undoes HTML character references: numeric (decimal, hex) and the named ones a key's characters can take. */
function htmlUnescape(text: string): string {
  return text.replace(
    /&(?:#(\d+)|#[xX]([0-9a-fA-F]+)|(quot|amp|lt|gt|apos|sol|bsol|lowbar|equals|plus|percnt|num|colon|period|comma|excl|quest|dollar|lpar|rpar|ast|semi|commat|grave|verbar|Hat|lsqb|rsqb|lcub|rcub));?/g,
    (match, decimal?: string, hex?: string, name?: string) => {
      const code = decimal ? parseInt(decimal, 10) : hex ? parseInt(hex, 16) : undefined;
      if (code !== undefined) return code <= 0x10ffff ? String.fromCodePoint(code) : match;
      return NAMED_REFERENCES[name as keyof typeof NAMED_REFERENCES] ?? match;
    },
  );
}

const NAMED_REFERENCES = {
  quot: '"',
  amp: '&',
  lt: '<',
  gt: '>',
  apos: "'",
  sol: '/',
  bsol: '\\',
  lowbar: '_',
  equals: '=',
  plus: '+',
  percnt: '%',
  num: '#',
  colon: ':',
  period: '.',
  comma: ',',
  excl: '!',
  quest: '?',
  dollar: '$',
  lpar: '(',
  rpar: ')',
  ast: '*',
  semi: ';',
  commat: '@',
  grave: '`',
  verbar: '|',
  Hat: '^',
  lsqb: '[',
  rsqb: ']',
  lcub: '{',
  rcub: '}',
} as const;
