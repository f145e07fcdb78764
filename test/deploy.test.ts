import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { optionRows } from '@flags/config';
import { proxySchema } from '@flags/proxy';
import { buildApp, loadConfig, openDatabase, serverSchema } from '@flags/server';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parse, parseAllDocuments } from 'yaml';
import { PROBES } from '../packages/proxy/src/probe.js';

/**
 * The deployment files (compose.yaml, deploy/kubernetes/) against the Kubernetes API schemas
 * (kubernetes-models: the OpenAPI schemas compiled into validators, offline) and against the
 * services themselves: every variable they set is an option the service reads, every port is the
 * service's default, every probe path answers.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const KUBERNETES = join(ROOT, 'deploy/kubernetes');
/** The one tag of the image everywhere it is named: the release's version. */
const IMAGE_TAG = `flags:${(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version}`;

/** The models of the kinds the manifests use, by `apiVersion/kind`. */
const MODELS: Readonly<Record<string, new (data: never) => { validate(): void }>> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

type FlagsService = 'flags-proxy' | 'flags-server';

/** The variables each service reads (its option schema), and its port in the image's mode. */
const proxyRows = optionRows(proxySchema);
const serverRows = optionRows(serverSchema);
const VARIABLES: Readonly<Record<FlagsService, ReadonlySet<string>>> = {
  'flags-proxy': new Set(proxyRows.flatMap((row) => row.env)),
  'flags-server': new Set(serverRows.flatMap((row) => row.env)),
};
const PORTS: Readonly<Record<FlagsService, number>> = {
  'flags-proxy': Number(proxyRows.find((row) => row.key === 'port')?.profileDefault('edge')),
  'flags-server': Number(serverRows.find((row) => row.key === 'port')?.default),
};

/** Which service a container or compose service runs: its command line starts it. */
function serviceOf(args: readonly string[]): FlagsService {
  if (args[0] === 'flags-server') return 'flags-server';
  assert.ok(
    args.length === 0 || ['edge', 'offline', 'flags-proxy'].includes(args[0]!),
    `runs a flags command: ${args.join(' ')}`,
  );
  return 'flags-proxy';
}

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  // biome-ignore lint/suspicious/noExplicitAny: manifests are read as parsed YAML
  spec?: any;
  data?: Record<string, string>;
}

function manifests(): { file: string; manifest: Manifest }[] {
  return readdirSync(KUBERNETES)
    .filter((name) => name.endsWith('.yaml'))
    .flatMap((file) =>
      parseAllDocuments(readFileSync(join(KUBERNETES, file), 'utf8')).map((document) => {
        assert.deepEqual(document.errors, [], `${file} is YAML`);
        return { file, manifest: document.toJSON() as Manifest };
      }),
    );
}

describe('Kubernetes manifests', () => {
  const all = manifests();
  const deployments = all.filter(({ manifest }) => manifest.kind === 'Deployment');
  const configMaps = new Map(
    all
      .filter(({ manifest }) => manifest.kind === 'ConfigMap')
      .map(({ manifest }) => [manifest.metadata.name, manifest.data ?? {}]),
  );

  it('each is valid against the Kubernetes API schema of its kind', () => {
    assert.ok(all.length > 0);
    for (const { file, manifest } of all) {
      const Model = MODELS[`${manifest.apiVersion}/${manifest.kind}`];
      assert.ok(Model, `${file}: a model for ${manifest.apiVersion} ${manifest.kind}`);
      assert.doesNotThrow(
        () => new Model(manifest as never).validate(),
        `${file}: ${manifest.kind} ${manifest.metadata.name}`,
      );
    }
  });

  it('the validator refuses a wrong manifest', () => {
    const { manifest } = deployments[0]!;
    const broken = structuredClone(manifest);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'http';
    assert.throws(() => new Deployment(broken as never).validate(), /containerPort/);
  });

  it('has a Deployment, a Service and a PodDisruptionBudget per service, and an autoscaler for the proxy', () => {
    const named = (kind: string) =>
      all
        .filter(({ manifest }) => manifest.kind === kind)
        .map(({ manifest }) => manifest.metadata.name)
        .sort();
    assert.deepEqual(named('Deployment'), ['flags-proxy', 'flags-server']);
    assert.deepEqual(named('Service'), ['flags-proxy', 'flags-server']);
    assert.deepEqual(named('PodDisruptionBudget'), ['flags-proxy', 'flags-server']);
    const autoscalers = all.filter(({ manifest }) => manifest.kind === 'HorizontalPodAutoscaler');
    assert.deepEqual(
      autoscalers.map(({ manifest }) => manifest.spec.scaleTargetRef.name),
      ['flags-proxy'],
    );
  });

  it('sets only variables the service reads, listens on its port, with resources and non-root', () => {
    for (const { manifest } of deployments) {
      const { spec } = manifest.spec.template;
      assert.equal(spec.securityContext?.runAsNonRoot, true, manifest.metadata.name);
      for (const container of spec.containers) {
        const service = serviceOf(container.args ?? []);
        assert.equal(service, manifest.metadata.name);
        const fromMaps = (container.envFrom ?? []).flatMap(
          (source: { configMapRef?: { name: string } }) => {
            const data = configMaps.get(source.configMapRef?.name ?? '');
            assert.ok(
              data,
              `${service}: ConfigMap ${source.configMapRef?.name} is in the manifests`,
            );
            return Object.keys(data);
          },
        );
        const names = [
          ...(container.env ?? []).map((entry: { name: string }) => entry.name),
          ...fromMaps,
        ];
        const unknown = names.filter((name) => !VARIABLES[service].has(name));
        assert.deepEqual(unknown, [], `${service} reads every variable it is given`);
        assert.deepEqual(
          container.ports.map((port: { containerPort: number }) => port.containerPort),
          [PORTS[service]],
        );
        assert.ok(container.resources?.requests?.memory && container.resources?.limits?.memory);
      }
    }
  });

  it('probes the proxy on its backstage ready and health routes', () => {
    const proxy = deployments.find(({ manifest }) => manifest.metadata.name === 'flags-proxy')!;
    const [container] = proxy.manifest.spec.template.spec.containers;
    assert.equal(container.readinessProbe.httpGet.path, PROBES.ready.path);
    assert.equal(container.livenessProbe.httpGet.path, PROBES.health.path);
  });

  it('probes the server on routes that answer 200 once it has loaded', async () => {
    const server = deployments.find(({ manifest }) => manifest.metadata.name === 'flags-server')!;
    const [container] = server.manifest.spec.template.spec.containers;
    const paths = [container.readinessProbe.httpGet.path, container.livenessProbe.httpGet.path];
    const config = loadConfig({ LOG_LEVEL: 'silent' });
    const db = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
    const app = await buildApp(config, { db, logger: false });
    try {
      for (const path of paths) {
        const answer = await app.inject({ url: path });
        assert.equal(answer.statusCode, 200, `${path}: ${answer.body}`);
      }
      assert.equal((await app.inject({ url: '/no-such-probe' })).statusCode, 404);
    } finally {
      await app.close();
      await db.close();
    }
  });

  it(`runs the image the docs build (${IMAGE_TAG})`, () => {
    for (const { manifest } of deployments)
      for (const container of manifest.spec.template.spec.containers)
        assert.equal(container.image, IMAGE_TAG, manifest.metadata.name);
  });

  it('the Secret example holds what the Deployments refer to', () => {
    const secrets = all.filter(({ manifest }) => manifest.kind === 'Secret');
    const keys = new Set(
      secrets.flatMap(({ manifest }) =>
        Object.keys((manifest as { stringData?: Record<string, string> }).stringData ?? {}).map(
          (key) => `${manifest.metadata.name}/${key}`,
        ),
      ),
    );
    for (const { manifest } of deployments) {
      for (const container of manifest.spec.template.spec.containers) {
        for (const entry of container.env ?? []) {
          const ref = entry.valueFrom?.secretKeyRef;
          if (ref) assert.ok(keys.has(`${ref.name}/${ref.key}`), `${ref.name}/${ref.key}`);
        }
      }
    }
  });
});

describe('compose.yaml', () => {
  const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8')) as {
    services: Record<
      string,
      {
        command?: string[];
        environment?: Record<string, string>;
        ports?: string[];
        profiles?: string[];
        image?: string;
        build?: unknown;
        healthcheck?: unknown;
      }
    >;
  };

  it('runs PostgreSQL, flags-server and flags-proxy, with Redis behind a profile', () => {
    assert.deepEqual(Object.keys(compose.services).sort(), [
      'flags-proxy',
      'flags-server',
      'postgres',
      'redis',
    ]);
    assert.deepEqual(compose.services.redis?.profiles, ['redis']);
    assert.equal(compose.services['flags-server']?.profiles, undefined);
    assert.equal(compose.services['flags-proxy']?.profiles, undefined);
  });

  it(`builds the image once (${IMAGE_TAG}) and runs both flags services from it, with its health check`, () => {
    const flags = ['flags-server', 'flags-proxy'].map((name) => compose.services[name]!);
    assert.deepEqual(
      flags.map((service) => service.image),
      [IMAGE_TAG, IMAGE_TAG],
    );
    assert.equal(flags.filter((service) => service.build !== undefined).length, 1);
    // The image's HEALTHCHECK asks whichever service runs: no check of its own overrides it.
    assert.deepEqual(
      flags.map((service) => service.healthcheck),
      [undefined, undefined],
    );
  });

  it('gives each flags service only variables it reads, and publishes its port', () => {
    for (const name of ['flags-server', 'flags-proxy'] as const) {
      const service = compose.services[name]!;
      assert.equal(serviceOf(service.command ?? []), name);
      const unknown = Object.keys(service.environment ?? {}).filter(
        (variable) => !VARIABLES[name].has(variable),
      );
      assert.deepEqual(unknown, [], `${name} reads every variable it is given`);
      assert.deepEqual(service.ports, [`${PORTS[name]}:${PORTS[name]}`]);
    }
    const proxyEnv = compose.services['flags-proxy']!.environment!;
    assert.equal(proxyEnv.UPSTREAM_URL, `http://flags-server:${PORTS['flags-server']}`);
    assert.match(
      compose.services['flags-server']!.environment!.DATABASE_URL!,
      /^postgres:\/\/[^@]+@postgres:5432\//,
    );
  });
});

describe('the image in the docs', () => {
  it(`is built and run as ${IMAGE_TAG} wherever a command names it`, () => {
    const commands = ['README.md', 'docs/deployment.md', 'Dockerfile'].flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(/docker (build|run) [^\n`|&]*/g)].map(
        (match) => ({ file, command: match[0] }),
      ),
    );
    assert.ok(commands.filter(({ command }) => command.startsWith('docker build')).length >= 3);
    for (const { file, command } of commands) {
      const named = command.startsWith('docker build')
        ? /-t (\S+)/.exec(command)?.[1]
        : /\s(flags(?::\S+)?)(?:\s+flags-server)?\s*$/.exec(command)?.[1];
      assert.equal(named, IMAGE_TAG, `${file}: ${command}`);
    }
  });

  it('has one HEALTHCHECK, the script that asks the service the container runs', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    assert.deepEqual(
      [...dockerfile.matchAll(/^HEALTHCHECK .*\\\n\s*(CMD .*)$/gm)].map((match) => match[1]),
      ['CMD ["flags-healthcheck"]'],
    );
    assert.match(
      dockerfile,
      /^COPY deploy\/docker\/healthcheck\.sh \/usr\/local\/bin\/flags-healthcheck$/m,
    );
  });
});
