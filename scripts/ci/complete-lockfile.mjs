// Adds lockfile entries for optional platform binaries (e.g. @swc/core-darwin-arm64) that the npm registry reachable
// here does not serve, so `npm install` could not record them and `npm ci` then refuses the lockfile as out of sync.
// Each entry carries the package's os/cpu/libc, so npm skips it on other platforms without fetching it; on the
// platform it is for, npm fetches it by version as usual. Run after `npm install` changes dependencies:
//   node scripts/ci/complete-lockfile.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const packages = lock.packages;

const OS = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openharmony', 'sunos', 'aix'];
const CPU = {
  arm64: 'arm64',
  x64: 'x64',
  ia32: 'ia32',
  arm: 'arm',
  ppc64: 'ppc64',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
};

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((part) => OS.includes(part));
  const cpu = parts.map((part) => CPU[part]).find(Boolean);
  if (!os || !cpu) return undefined;
  const libc = parts.some((part) => part.startsWith('musl'))
    ? 'musl'
    : parts.some((part) => part.startsWith('gnu'))
      ? 'glibc'
      : undefined;
  return { os: [os], cpu: [cpu], ...(os === 'linux' && libc ? { libc: [libc] } : {}) };
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    if (packages[`${base}node_modules/${name}`] || packages[`node_modules/${name}`]) continue;
    const platform = platformOf(name);
    if (!platform || !/^\d+\.\d+\.\d+/.test(version)) {
      console.warn(`left out ${name}@${version}: cannot tell its platform or exact version`);
      continue;
    }
    packages[`node_modules/${name}`] = { version, ...platform, optional: true };
    added += 1;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional platform entries`);
