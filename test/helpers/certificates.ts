import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Files of a private certificate authority and what it signed, made by `openssl` in a temp dir. */
export interface Certificates {
  readonly dir: string;
  /** The authority's certificate (PEM). */
  readonly caCert: string;
  /** A server certificate for `localhost` and `127.0.0.1` (PEM), and its PKCS#8 key. */
  readonly serverCert: string;
  readonly serverKey: string;
  /** A client certificate (PEM), its PKCS#8 key, and both as PKCS#12 under `passphrase`. */
  readonly clientCert: string;
  readonly clientKey: string;
  readonly clientP12: string;
  readonly passphrase: string;
  /** A second, unrelated authority's certificate: one that verifies nothing above. */
  readonly otherCaCert: string;
  /** Removes the directory. */
  remove(): void;
}

function openssl(dir: string, args: readonly string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A self-signed authority `name` (`name.crt`, `name.key`). */
function authority(dir: string, name: string): void {
  openssl(dir, [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

/** A key and a certificate `name` signed by the authority `ca`, with extensions from `extensions`. */
function signed(dir: string, name: string, ca: string, extensions: string): void {
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, ['genpkey', '-algorithm', 'RSA', '-out', `${name}.key`]);
  openssl(dir, [
    'req',
    '-new',
    '-key',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    `/CN=${name}`,
  ]);
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${ca}.crt`,
    '-CAkey',
    `${ca}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    '-extfile',
    `${name}.ext`,
  ]);
}

/** Makes a private authority, a server and a client certificate signed by it, and an unrelated authority. */
export function makeCertificates(): Certificates {
  const dir = mkdtempSync(join(tmpdir(), 'flags-tls-'));
  authority(dir, 'ca');
  authority(dir, 'other-ca');
  signed(
    dir,
    'server',
    'ca',
    'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\n',
  );
  signed(dir, 'client', 'ca', 'extendedKeyUsage=clientAuth\n');
  const passphrase = 'p12-passphrase';
  openssl(dir, [
    'pkcs12',
    '-export',
    '-inkey',
    'client.key',
    '-in',
    'client.crt',
    '-certfile',
    'ca.crt',
    '-out',
    'client.p12',
    '-passout',
    `pass:${passphrase}`,
  ]);
  const file = (name: string) => join(dir, name);
  return {
    dir,
    caCert: file('ca.crt'),
    serverCert: file('server.crt'),
    serverKey: file('server.key'),
    clientCert: file('client.crt'),
    clientKey: file('client.key'),
    clientP12: file('client.p12'),
    passphrase,
    otherCaCert: file('other-ca.crt'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
