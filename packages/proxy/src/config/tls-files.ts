import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';
import { ConfigError } from '@flags/config';

/** The HTTPS listener's certificate and key (`tls.*` options), read at start. */
export interface ServerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  /** HTTPS port (`tls.serverPort`). */
  readonly port: number;
  /** `port` answers plain HTTP with a redirect to HTTPS (`tls.redirectHttpToHttps`). */
  readonly redirectHttp: boolean;
}

/**
 * What the upstream's TLS connections take besides the defaults (`httpOptions.*`), in the form
 * `node:tls` takes it: trusted authorities, and the client identity for mutual TLS.
 */
export interface UpstreamTls {
  readonly ca?: readonly (string | Buffer)[];
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly pfx?: Buffer;
  readonly passphrase?: string;
}

/** An option naming a file: its in-code name and its variable, for messages. */
interface FileOption {
  readonly name: string;
  readonly env: string;
  readonly path: string | undefined;
}

/** `tls.serverCert (TLS_SERVER_CERT)` */
function named(option: Pick<FileOption, 'name' | 'env'>): string {
  return `${option.name} (${option.env})`;
}

function read(option: FileOption & { path: string }): Buffer {
  try {
    return readFileSync(option.path);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError([`${named(option)}: cannot read "${option.path}" (${reason})`]);
  }
}

/**
 * Refuses at start what `node:tls` would refuse at the first connection (a file that holds no
 * certificate or key, a key that does not fit its certificate, a wrong PKCS#12 passphrase),
 * naming the options concerned.
 */
function checked(context: tls.SecureContextOptions, options: readonly FileOption[]): void {
  try {
    tls.createSecureContext(context);
  } catch (error) {
    const files = options
      .filter((option) => option.path !== undefined)
      .map((option) => `${named(option)} "${option.path}"`)
      .join(', ');
    throw new ConfigError([`${files}: not usable for TLS (${(error as Error).message})`]);
  }
}

/**
 * The HTTPS listener's files, read, or `undefined` when `enable` is off. As Unleash Edge 20,
 * HTTPS needs both a certificate and its key; Edge stops there too (without saying which).
 */
export function serverTlsOf(options: {
  readonly enable: boolean;
  readonly serverCert?: string | undefined;
  readonly serverKey?: string | undefined;
  readonly serverPort: number;
  readonly redirectHttpToHttps: boolean;
}): ServerTls | undefined {
  if (!options.enable) return undefined;
  const cert = { name: 'tls.serverCert', env: 'TLS_SERVER_CERT', path: options.serverCert };
  const key = { name: 'tls.serverKey', env: 'TLS_SERVER_KEY', path: options.serverKey };
  const missing = [cert, key].filter((option) => option.path === undefined);
  if (missing.length > 0)
    throw new ConfigError(
      missing.map(
        (option) =>
          `${named(option)} must name a PEM file: tls.enable (TLS_ENABLE) serves HTTPS with it`,
      ),
    );
  const files = {
    cert: read(cert as FileOption & { path: string }),
    key: read(key as FileOption & { path: string }),
  };
  checked(files, [cert, key]);
  return Object.freeze({
    ...files,
    port: options.serverPort,
    redirectHttp: options.redirectHttpToHttps,
  });
}

/**
 * The authorities trusted beside a private one: Node's bundled roots and `NODE_EXTRA_CA_CERTS`
 * (`ca` replaces the defaults in `node:tls`, where Edge adds to them).
 */
function defaultAuthorities(): readonly string[] {
  const withExtra = (tls as { getCACertificates?: (type: string) => string[] }).getCACertificates;
  return withExtra?.('default') ?? tls.rootCertificates;
}

/**
 * The upstream's TLS material, read: the private authority (`upstreamCertificateFile`) and a
 * client identity, PKCS#12 (`clientIdentityFile`) winning over PKCS#8 PEM files as in Edge.
 */
export function upstreamTlsOf(options: {
  readonly upstreamCertificateFile?: string | undefined;
  readonly clientCertificateFile?: string | undefined;
  readonly clientKeyFile?: string | undefined;
  readonly clientIdentityFile?: string | undefined;
  readonly clientIdentityPassphrase?: string | undefined;
  readonly clientPemFile?: string | undefined;
}): UpstreamTls {
  const ca = {
    name: 'httpOptions.upstreamCertificateFile',
    env: 'UPSTREAM_CERTIFICATE_FILE',
    path: options.upstreamCertificateFile,
  };
  const pfx = {
    name: 'httpOptions.clientIdentityFile',
    env: 'PKCS12_IDENTITY_FILE',
    path: options.clientIdentityFile,
  };
  const cert = {
    name: 'httpOptions.clientCertificateFile',
    env: 'PKCS8_CLIENT_CERTIFICATE_FILE',
    path: options.clientCertificateFile,
  };
  const key = {
    name: 'httpOptions.clientKeyFile',
    env: 'PKCS8_CLIENT_KEY_FILE',
    path: options.clientKeyFile,
  };
  const pem = {
    name: 'httpOptions.clientPemFile',
    env: 'PEM_CERT_FILE',
    path: options.clientPemFile,
  };
  const result: {
    ca?: (string | Buffer)[];
    cert?: Buffer;
    key?: Buffer;
    pfx?: Buffer;
    passphrase?: string;
  } = {};
  const used: FileOption[] = [];
  if (ca.path !== undefined) {
    const own = read(ca as FileOption & { path: string });
    checked({ ca: own }, [ca]);
    result.ca = [...defaultAuthorities(), own];
  }
  if (pfx.path !== undefined) {
    result.pfx = read(pfx as FileOption & { path: string });
    result.passphrase = options.clientIdentityPassphrase ?? '';
    used.push(pfx);
  } else if (cert.path !== undefined || key.path !== undefined) {
    const missing = cert.path === undefined ? cert : key.path === undefined ? key : undefined;
    if (missing !== undefined)
      throw new ConfigError([
        `${named(missing)} must be set too: a PKCS#8 client identity is a certificate file and a key file`,
      ]);
    result.cert = read(cert as FileOption & { path: string });
    result.key = read(key as FileOption & { path: string });
    used.push(cert, key);
  } else if (pem.path !== undefined) {
    // Certificate and key in one file: each reader takes its own blocks from it.
    result.cert = read(pem as FileOption & { path: string });
    result.key = result.cert;
    used.push(pem);
  }
  if (used.length > 0) checked(result, used);
  return Object.freeze(result);
}
