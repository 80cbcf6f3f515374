/**
 * What kind of place an address or a URL's host is: the public internet, or somewhere a worker must not be aimed at by
 * a URL (its own machine, the private network, the cloud's metadata service). Pure (ipaddr.js is plain JavaScript),
 * so the workflow's input check, the client's and the worker's connection guard (src/address-guard.ts) share one rule.
 */
import ipaddr from 'ipaddr.js';

/** The classes refused as a target unless a setting allows them; `public` is always allowed. */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'cgnat'
  | 'multicast'
  | 'unspecified'
  | 'reserved';

/** What the classes are, for error messages that say why a target was refused. */
export const ADDRESS_CLASS_NAMES: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'a loopback address (this machine)',
  private: 'a private-network address (10/8, 172.16/12, 192.168/16)',
  'link-local': 'a link-local address (169.254/16, fe80::/10; the cloud metadata service lives there)',
  'unique-local': 'a unique-local IPv6 address (fc00::/7, a private network)',
  cgnat: 'a carrier-grade NAT address (100.64/10, a provider-internal network)',
  multicast: 'a multicast or broadcast address',
  unspecified: 'the unspecified address (0.0.0.0 or ::, which reaches this machine)',
  reserved: 'a reserved or special-purpose address (not a public host)',
};

/**
 * The cloud metadata services' names (GCP, AWS, Tencent, Equinix): they answer with the worker's own credentials, so
 * no setting allows them, whatever they resolve to.
 */
export const METADATA_HOST_NAMES: readonly string[] = [
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
  'metadata.packet.net',
];

// ipaddr.js's ranges (v4 and v6 alike) to ours; anything not listed is special-purpose and refused.
const RANGE_CLASSES: Record<string, AddressClass> = {
  unicast: 'public',
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local',
  uniqueLocal: 'unique-local',
  carrierGradeNat: 'cgnat',
  multicast: 'multicast',
  broadcast: 'multicast',
  unspecified: 'unspecified',
};

/** Whether a text is an IP address in any form a URL parser takes (`10.0.0.5`, `0xa.5`, `167772165`, `::1`). */
export function isIpAddress(text: string): boolean {
  return ipaddr.isValid(text);
}

/**
 * The class of an IP address (an IPv4-mapped IPv6 address is classed as the IPv4 address it carries). Throws on a
 * text that is not an address: call `isIpAddress` first.
 */
export function classifyAddress(address: string): AddressClass {
  return RANGE_CLASSES[ipaddr.process(address).range()] ?? 'reserved';
}

/** Whether an address lies in a CIDR block (`10.1.0.0/16`, `fd12::/16`); mapped IPv4 addresses count as IPv4. */
export function addressInBlock(address: string, block: string): boolean {
  const parsed = ipaddr.process(address);
  const [range, bits] = ipaddr.parseCIDR(block);
  if (parsed.kind() !== range.kind()) return false;
  return parsed.match([range, bits] as [typeof parsed, number]);
}

/** Whether a text is a CIDR block ipaddr.js can match (`10.0.0.0/8`, `fd00::/8`). */
export function isAddressBlock(text: string): boolean {
  try {
    ipaddr.parseCIDR(text);
    return true;
  } catch {
    return false;
  }
}

/** A host name as DNS compares it: lower case, without the root's trailing dot. */
export function normalHostName(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

/** Whether a host name is one of the cloud metadata services'. */
export function isMetadataHostName(host: string): boolean {
  return METADATA_HOST_NAMES.includes(normalHostName(host));
}

/**
 * Why a URL's host (as written: `[fd00::1]`, `10.0.0.5`, `hooks.example.com`, port already cut off) can never be a
 * target, or undefined. Refused here: a metadata name, an address literal of any class but `public` and `loopback`,
 * and hosts a URL parser would rewrite into an address (percent-escapes, non-ASCII). Loopback is the worker's to
 * decide (its AGENT_NOTIFY_ALLOW_LOOPBACK), and names are checked by the worker at every connection.
 */
export function literalHostProblem(host: string, what: string): string | undefined {
  const bracketed = /^\[(.*)\]$/.exec(host);
  if (bracketed) {
    const inner = bracketed[1] as string;
    if (!ipaddr.IPv6.isValid(inner)) return `${what}'s host ${host} is not a valid IPv6 address`;
    return classProblem(inner, host, what);
  }
  if (!/^[A-Za-z0-9.-]+$/.test(host)) {
    return (
      `${what}'s host must be a plain DNS name or IP address (letters, digits, '.', '-'; ` +
      `write an international name in its xn-- form, without percent-escapes)`
    );
  }
  const name = normalHostName(host);
  if (isMetadataHostName(name)) {
    return `${what} must not name a cloud metadata service (${name}): it answers with the worker's own credentials`;
  }
  if (ipaddr.IPv4.isValid(name)) return classProblem(name, host, what);
  // A URL parser reads a host whose last label is a number as an IPv4 address (or refuses it).
  if (/^(?:0x[0-9a-f]*|\d+)$/i.test(name.split('.').at(-1) ?? '')) {
    return `${what}'s host ${host} ends in a number but is not a valid IPv4 address`;
  }
  return undefined;
}

function classProblem(address: string, host: string, what: string): string | undefined {
  const kind = classifyAddress(address);
  if (kind === 'public' || kind === 'loopback') return undefined;
  return (
    `${what} must not aim at ${ADDRESS_CLASS_NAMES[kind]} (${host}): callbacks go to public receivers; ` +
    'a receiver on a private network is named by DNS and allowed on the workers (AGENT_NOTIFY_ALLOW_PRIVATE_NETWORKS ' +
    'or AGENT_NOTIFY_ALLOW_HOSTS)'
  );
}
