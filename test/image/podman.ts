import { execFile, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  appendFileSync,
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Podman as the image test uses it, on a machine with no image registry and no Docker daemon: the
 * base image (Debian, Node.js 22, npm) is made here from Debian's mirror and the npm registry,
 * imported once per machine and kept; the repository's Dockerfile is built on it and run.
 */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DEBIAN_SUITE = 'bookworm';
const NODE_MAJOR = '22';
/** node:22-slim ships npm 10. */
const NPM_RANGE = '10';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
/** Raised when the recipe below changes what goes into the base image, so a new one is built. */
const RECIPE = 1;
export const BASE_REPOSITORY = 'localhost/flags-test-base';

/** Whether `command` is an executable file in a folder of PATH. */
function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(':').some((folder) => {
    try {
      accessSync(join(folder, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** What is missing to run the image test, with how to get it; empty when nothing is. */
export function missingTools(): string[] {
  const missing = ['podman', 'runc', 'debootstrap']
    .filter((command) => !onPath(command))
    .map((command) => `${command} (apt-get install -y ${command})`);
  if (process.getuid?.() !== 0) missing.push('root (debootstrap and podman run as root here)');
  return missing;
}

/**
 * `containers.conf` for every podman call: no default ulimits (the runtime cannot set them on
 * this machine's cgroups).
 */
function containersConf(): string {
  const file = join(tmpdir(), 'flags-image-test-containers.conf');
  writeFileSync(file, '[containers]\ndefault_ulimits = []\n');
  return file;
}

const PODMAN_ENV = { ...process.env, CONTAINERS_CONF: containersConf() };
/** runc with cgroupfs: the default runtime refuses this machine's hybrid cgroups. */
const PODMAN_GLOBAL = ['--runtime', 'runc', '--cgroup-manager', 'cgroupfs'];

export interface PodmanResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `podman <args>`: its exit status and output; never throws for a non-zero status. */
export function podman(args: readonly string[], timeoutMs = 60_000): Promise<PodmanResult> {
  return new Promise((resolve, reject) => {
    execFile(
      'podman',
      [...PODMAN_GLOBAL, ...args],
      { env: PODMAN_ENV, timeout: timeoutMs, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') {
          reject(new Error(`podman ${args.join(' ')}: ${error.message}\n${stderr}`));
          return;
        }
        resolve({ status: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

/** `podman <args>`, its standard output; throws with its output unless it exits 0. */
export async function podmanOk(args: readonly string[], timeoutMs?: number): Promise<string> {
  const result = await podman(args, timeoutMs);
  if (result.status !== 0)
    throw new Error(
      `podman ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`,
    );
  return result.stdout;
}

/** npm's environment without the `npm_*` variables of an npm that may have started us. */
function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

function npmConfig(key: string): string | undefined {
  const value = execFileSync('npm', ['config', 'get', key], {
    env: npmEnv(),
    encoding: 'utf8',
  }).trim();
  return value === '' || value === 'null' || value === 'undefined' ? undefined : value;
}

/**
 * The Debian mirror apt uses here (`/etc/apt/sources.list*`, one-line or deb822 form) for the
 * suite, or Debian's own.
 */
export function debianMirror(suite = DEBIAN_SUITE): string {
  const files = ['/etc/apt/sources.list'];
  if (existsSync('/etc/apt/sources.list.d'))
    for (const name of readdirSync('/etc/apt/sources.list.d').sort())
      files.push(join('/etc/apt/sources.list.d', name));
  for (const file of files) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (name: string) =>
          new RegExp(`^${name}:\\s*(.+)$`, 'im').exec(stanza)?.[1]?.trim().split(/\s+/) ?? [];
        if (field('Types').includes('deb') && field('Suites').includes(suite)) {
          const uri = field('URIs')[0];
          if (uri !== undefined) return uri;
        }
      }
    } else {
      for (const line of text.split('\n')) {
        const words = line
          .replace(/\[[^\]]*\]/, '')
          .trim()
          .split(/\s+/);
        if (words[0] === 'deb' && words[2] === suite && words[1] !== undefined) return words[1];
      }
    }
  }
  return 'http://deb.debian.org/debian';
}

/** What goes into the base image, and the tag that names exactly that. */
interface BaseRecipe {
  readonly tag: string;
  readonly mirror: string;
  readonly nodeBinary: string;
  readonly npmTarball: string;
  readonly npmrc: string;
}

function recipe(work: string): BaseRecipe {
  const nodeBinary = execFileSync(
    process.execPath,
    [join(ROOT, 'scripts/node-binary.mjs'), NODE_MAJOR],
    { env: npmEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  ).trim();
  const nodeVersion = execFileSync(nodeBinary, ['--version'], { encoding: 'utf8' }).trim();
  const npmTarball = join(
    work,
    execFileSync('npm', ['pack', '--silent', `npm@${NPM_RANGE}`], {
      cwd: work,
      env: npmEnv(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
      .trim()
      .split('\n')
      .at(-1) as string,
  );
  const npmVersion = /npm-(.+)\.tgz$/.exec(npmTarball)?.[1] ?? 'unknown';
  // npm inside the build reaches the registry as npm does here: the same registry and proxies,
  // and the machine's authorities (TLS to the registry may be intercepted on the way).
  const settings: string[] = [`registry=${npmConfig('registry') ?? 'https://registry.npmjs.org/'}`];
  for (const key of ['proxy', 'https-proxy', 'noproxy', 'strict-ssl']) {
    const value = npmConfig(key);
    if (value !== undefined) settings.push(`${key}=${value}`);
  }
  settings.push(`cafile=${CA_BUNDLE}`, 'fund=false', 'audit=false', 'update-notifier=false');
  const npmrc = `${settings.join('\n')}\n`;
  const mirror = debianMirror();
  const key = createHash('sha256')
    .update(
      JSON.stringify({
        RECIPE,
        suite: DEBIAN_SUITE,
        mirror,
        nodeVersion,
        npmVersion,
        npmrc,
        ca: createHash('sha256').update(readFileSync(CA_BUNDLE)).digest('hex'),
      }),
    )
    .digest('hex')
    .slice(0, 12);
  const tag = `${BASE_REPOSITORY}:${DEBIAN_SUITE}-node${nodeVersion.replace(/^v/, '')}-npm${npmVersion}-${key}`;
  return { tag, mirror, nodeBinary, npmTarball, npmrc };
}

/**
 * The base image the Dockerfile is built on here (its `NODE_IMAGE`), as node:22-slim has it:
 * Debian minbase, Node.js and npm in /usr/local, a `node` user with uid 1000. Built once per
 * machine and kept: an image of the same tag is reused.
 */
export async function baseImage(log: (line: string) => void = () => {}): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), 'flags-image-base-'));
  try {
    const base = recipe(work);
    if ((await podman(['image', 'exists', base.tag])).status === 0) return base.tag;
    log(`building ${base.tag} from ${base.mirror} (once per machine)`);
    const root = join(work, 'root');
    execFileSync('debootstrap', ['--variant=minbase', DEBIAN_SUITE, root, base.mirror], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 20 * 60_000,
    });
    // Nothing of apt's downloads goes in.
    for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists'])
      for (const name of readdirSync(join(root, dir)))
        if (name !== 'partial' && name !== 'lock')
          rmSync(join(root, dir, name), { force: true, recursive: true });

    const local = join(root, 'usr/local');
    copyFileSync(base.nodeBinary, join(local, 'bin/node'));
    chmodSync(join(local, 'bin/node'), 0o755);
    const npmDir = join(local, 'lib/node_modules/npm');
    mkdirSync(npmDir, { recursive: true });
    execFileSync('tar', ['xzf', base.npmTarball, '-C', npmDir, '--strip-components=1']);
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin/npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin/npx'));
    // npm's global config: $PREFIX/etc/npmrc, the prefix being /usr/local for /usr/local/bin/node.
    mkdirSync(join(local, 'etc'), { recursive: true });
    writeFileSync(join(local, 'etc/npmrc'), base.npmrc);
    mkdirSync(join(root, dirname(CA_BUNDLE)), { recursive: true });
    copyFileSync(CA_BUNDLE, join(root, CA_BUNDLE));

    // The `node` user and group of the Node.js images: uid and gid 1000, home /home/node.
    appendFileSync(join(root, 'etc/passwd'), 'node:x:1000:1000::/home/node:/bin/sh\n');
    appendFileSync(join(root, 'etc/group'), 'node:x:1000:\n');
    appendFileSync(join(root, 'etc/shadow'), 'node:!:19000:0:99999:7:::\n');
    mkdirSync(join(root, 'home/node'), { recursive: true });
    execFileSync('chown', ['1000:1000', join(root, 'home/node')]);

    await importRoot(root, base.tag);
    return base.tag;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `tar -C root -c . | podman import - tag`, with node:22-slim's settings. */
function importRoot(root: string, tag: string): Promise<void> {
  const changes = [
    'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    `ENV NODE_EXTRA_CA_CERTS=${CA_BUNDLE}`,
    'USER root',
    'WORKDIR /',
    'CMD ["node"]',
  ].flatMap((change) => ['--change', change]);
  return new Promise((resolve, reject) => {
    const tar = spawn('tar', ['-C', root, '-c', '.'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const importer = execFile(
      'podman',
      [...PODMAN_GLOBAL, 'import', ...changes, '-', tag],
      { env: PODMAN_ENV, maxBuffer: 64 * 1024 * 1024 },
      (error, _stdout, stderr) =>
        error ? reject(new Error(`podman import: ${error.message}\n${stderr}`)) : resolve(),
    );
    tar.stdout.pipe(importer.stdin as NodeJS.WritableStream);
    tar.on('error', reject);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const missing = missingTools();
  if (missing.length > 0) {
    console.error(`missing: ${missing.join(', ')}`);
    process.exit(1);
  }
  console.log(await baseImage((line) => console.error(line)));
}
