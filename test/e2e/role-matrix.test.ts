import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { buildApp, type Database, loadConfig, openDatabase } from '@flags/server';
import type { FastifyInstance } from 'fastify';
import {
  startUnleashServer,
  UNLEASH_VERSION,
  unleashServerSkip,
} from '../helpers/unleash-server.js';

/**
 * Who may call which admin route, flags-server against the real unleash-server (issue 46,
 * acceptance 3). The routes are every route flags-server guards with its admin guard, read from
 * the app itself, so a new route cannot escape the matrix. Each is sent by an Admin, an Editor and
 * a Viewer, each with a session cookie and with a personal access token, and by an admin API
 * token, to both servers. An answer is `refused` (401 or 403) or `admitted` (anything else); the
 * two servers must decide the same, except for the routes in KEPT (each with why) and those
 * unleash-server does not serve (FLAGS_ONLY, with flags-server's own expected decision).
 *
 * Every request names things that do not exist or sends a body that is invalid, so an admitted
 * request fails after the permission check (400, 404) or changes nothing another probe relies on
 * (PROBES says where): unleash-server checks a route's permission before its content type and
 * body (`Controller.route`), flags-server in the guard, an `onRequest` hook, before it parses the
 * body. ROLE_MATRIX_PRINT=1 prints the whole matrix with every answer.
 */

/** The callers, in the matrix's column order. */
const CALLERS = [
  'Admin session',
  'Admin token (PAT)',
  'Editor session',
  'Editor token (PAT)',
  'Viewer session',
  'Viewer token (PAT)',
  'admin API token',
] as const;
type Caller = (typeof CALLERS)[number];

/**
 * A row of decisions in CALLERS' order, grouped as `Admin Editor Viewer token`, each of a pair
 * session then PAT: `y` admitted, `-` refused (`!` rate-limited, which matches nothing).
 * `'yy yy -- y'`: Admins and Editors, not Viewers.
 */
type Row = string;

/** The rows the roles give: what a route that needs Admin, Editor or any role answers. */
const ROWS = {
  admin: 'yy -- -- y',
  editor: 'yy yy -- y',
  any: 'yy yy yy y',
} as const satisfies Record<string, Row>;

/**
 * Routes unleash-server 8.2 (open source) does not serve: its answer to the admin API token is
 * its "path … is not available" 404, or (`answeredBy`) another of its routes matches the path.
 * flags-server's own decision is checked instead.
 */
const FLAGS_ONLY: Readonly<
  Record<string, { readonly row: Row; readonly why: string; readonly answeredBy?: string }>
> = {
  'GET /api/admin/events/stream': {
    row: ROWS.any,
    answeredBy: 'GET /api/admin/events/:featureName (the events of a flag named "stream")',
    why: "The admin UI's live changes: every role reads the event log in both servers.",
  },
  'POST /api/admin/projects': {
    row: ROWS.admin,
    why: 'Projects beyond `default` are an Enterprise feature of unleash-server; here Admins make them.',
  },
  'GET /api/admin/projects/:project': { row: ROWS.any, why: 'A project, read like the list.' },
  'PUT /api/admin/projects/:project': { row: ROWS.admin, why: 'As creating a project.' },
  'DELETE /api/admin/projects/:project': { row: ROWS.admin, why: 'As creating a project.' },
  'GET /api/admin/projects/:project/features/:feature/dependencies/possible-parents': {
    row: ROWS.any,
    why: 'A read, as the flag it is asked of.',
  },
  'POST /api/admin/environments': {
    row: ROWS.admin,
    why: 'Creating environments is an Enterprise feature of unleash-server; here Admins do it.',
  },
  'PUT /api/admin/environments/update/:name': { row: ROWS.admin, why: 'As creating one.' },
  'DELETE /api/admin/environments/:name': { row: ROWS.admin, why: 'As creating one.' },
  'GET /api/admin/roles': {
    row: ROWS.admin,
    why:
      'Roles are served by unleash-server Enterprise only; here they belong to user ' +
      'administration, which is Admin-only.',
  },
  'GET /api/admin/roles/:id': { row: ROWS.admin, why: 'As the list of roles.' },
  'GET /api/admin/settings/personal-access-tokens': {
    row: ROWS.admin,
    why:
      "The longest lifetime of a new personal access token, an Admin's setting (Unleash " +
      'Enterprise has one of its own).',
  },
  'PUT /api/admin/settings/personal-access-tokens': { row: ROWS.admin, why: 'As reading it.' },
  'GET /api/admin/logins': {
    row: ROWS.admin,
    why:
      "Unleash Enterprise's login history path; open-source unleash-server has none. Admins " +
      'only: it names users and their addresses.',
  },
  'GET /api/admin/auth/oidc/settings': {
    row: ROWS.admin,
    why:
      "Single sign-on settings, Unleash Enterprise's path; open-source unleash-server has none. " +
      'Admins only: they hold the client secret (never answered).',
  },
  'POST /api/admin/auth/oidc/settings': { row: ROWS.admin, why: 'As reading them.' },
  'GET /api/admin/auth/simple/settings': {
    row: ROWS.admin,
    why: "Whether password logins are on, Unleash Enterprise's path; an Admin's setting.",
  },
  'POST /api/admin/auth/simple/settings': { row: ROWS.admin, why: 'As reading it.' },
  'GET /api/admin/groups': {
    row: ROWS.admin,
    why:
      "Groups (Unleash Enterprise's shape) map the identity provider's groups to root roles: " +
      'part of user administration, which is Admin-only.',
  },
  'POST /api/admin/groups': { row: ROWS.admin, why: 'As the list of groups.' },
  'GET /api/admin/groups/:id': { row: ROWS.admin, why: 'As the list of groups.' },
  'PUT /api/admin/groups/:id': { row: ROWS.admin, why: 'As the list of groups.' },
  'DELETE /api/admin/groups/:id': { row: ROWS.admin, why: 'As the list of groups.' },
  'GET /api/admin/insights': {
    row: ROWS.any,
    why:
      'Insights are served by unleash-server Enterprise only; here they are counts every role ' +
      'may read (no user is named).',
  },
};

/** Personal access tokens are managed from a session (issue 46): not by a token of any kind. */
const PATS_FROM_SESSIONS: Row = 'y- y- y- -';
const PATS_NEED_A_SESSION =
  'A personal access token cannot list, create or delete personal access tokens (a leaked ' +
  'token must not make itself new ones, outlive its expiry through them or delete the others); ' +
  'unleash-server lets it.';

/** Differences kept on purpose: flags-server's row, unleash-server's, and why. */
const KEPT: Readonly<
  Record<string, { readonly ours: Row; readonly theirs: Row; readonly why: string }>
> = {
  'GET /api/admin/api-tokens': {
    ours: ROWS.admin,
    theirs: ROWS.editor,
    why:
      'unleash-server lets Editors list the client and frontend tokens (READ_CLIENT_API_TOKEN, ' +
      'READ_FRONTEND_API_TOKEN), never admin tokens; flags-server has no per-type filter on the ' +
      'list, so it stays Admin-only rather than show Editors the admin tokens.',
  },
  'POST /api/admin/tags': {
    ours: ROWS.editor,
    theirs: ROWS.any,
    why:
      'unleash-server lets any signed-in user create a tag (no permission on the route); in ' +
      'flags-server a Viewer writes nothing.',
  },
  'GET /api/admin/user/tokens': {
    ours: PATS_FROM_SESSIONS,
    theirs: 'yy yy yy -',
    why: PATS_NEED_A_SESSION,
  },
  'POST /api/admin/user/tokens': {
    ours: PATS_FROM_SESSIONS,
    theirs: 'yy yy yy -',
    why: PATS_NEED_A_SESSION,
  },
  'DELETE /api/admin/user/tokens/:id': {
    ours: PATS_FROM_SESSIONS,
    theirs: 'yy yy yy y',
    why:
      `${PATS_NEED_A_SESSION} An admin API token has no personal access tokens: flags-server ` +
      'refuses it (403) as it does listing them; unleash-server fails with a 500 (a query ' +
      'without a user id).',
  },
};

/** A flag, strategy, tag, … that exists on neither server. */
const MISSING = 'role-matrix-missing';

/** Values for the routes' path parameters: the default project, otherwise nothing that exists. */
const PARAMS: Readonly<Record<string, string>> = {
  project: 'default',
  feature: MISSING,
  environment: 'development',
  strategyId: '00000000-0000-4000-8000-000000000000',
  parent: `${MISSING}-parent`,
  name: MISSING,
  type: MISSING,
  value: MISSING,
  token: MISSING,
  id: '999999',
};

/** What a probe sends: a path and, for writes, a JSON body. */
interface Probe {
  readonly url: string;
  readonly body?: unknown;
}

/** A flag made for the test in the default project, active, never archived. */
const FLAG = 'role-matrix-flag';

/** What the probes of some routes need from the server they are sent to. */
interface Fixtures {
  /** A segment made for the test (unleash-server refuses everyone a missing segment's update). */
  readonly segmentId: number;
  /** Makes a segment to be deleted and answers its id. */
  newSegment(): Promise<number>;
}

/**
 * Probes for routes the PARAMS and an empty body do not fit, by `METHOD /route/:param`.
 */
const PROBES: Readonly<Record<string, (fixtures: Fixtures) => Probe | Promise<Probe>>> = {
  // unleash-server checks a segment's own project, so the segment must exist; a deleting probe
  // that is admitted deletes the one made for it.
  'PUT /api/admin/segments/:id': ({ segmentId }) => ({
    url: `/api/admin/segments/${segmentId}`,
    body: {},
  }),
  'DELETE /api/admin/segments/:id': async ({ newSegment }) => ({
    url: `/api/admin/segments/${await newSegment()}`,
  }),
  // Routes without the project in their path: unleash-server finds the flag's project to check
  // an Editor's permission in it, so the flag must exist. Reviving or deleting an active flag
  // changes nothing on either server; the tag bodies are invalid.
  'POST /api/admin/archive/revive/:feature': () => ({
    url: `/api/admin/archive/revive/${FLAG}`,
    body: {},
  }),
  'DELETE /api/admin/archive/:feature': () => ({ url: `/api/admin/archive/${FLAG}` }),
  'POST /api/admin/features/:feature/tags': () => ({
    url: `/api/admin/features/${FLAG}/tags`,
    body: {},
  }),
  'PUT /api/admin/features/:feature/tags': () => ({
    url: `/api/admin/features/${FLAG}/tags`,
    body: {},
  }),
  'DELETE /api/admin/features/:feature/tags/:type/:value': () => ({
    url: `/api/admin/features/${FLAG}/tags/${MISSING}/${MISSING}`,
  }),
  // unleash-server checks an import's permissions in the handler, after the body's schema: a
  // valid document whose flag depends on a parent that does not exist, refused by both servers
  // after the permission check.
  'POST /api/admin/features-batch/import': () => ({
    url: '/api/admin/features-batch/import',
    body: {
      project: 'default',
      environment: 'development',
      data: {
        features: [{ name: MISSING }],
        featureStrategies: [],
        featureEnvironments: [],
        contextFields: [],
        featureTags: [],
        segments: [],
        tagTypes: [],
        dependencies: [{ feature: MISSING, dependencies: [{ feature: PARAMS.parent }] }],
      },
    },
  }),
  // Valid but for an expiry in the past: refused after the permission check on both servers.
  'POST /api/admin/user/tokens': () => ({
    url: '/api/admin/user/tokens',
    body: { description: 'role matrix probe', expiresAt: '2000-01-01T00:00:00Z' },
  }),
  // Not the default project: a project that does not exist.
  'PUT /api/admin/projects/:project': () => ({ url: `/api/admin/projects/${MISSING}`, body: {} }),
  'DELETE /api/admin/projects/:project': () => ({ url: `/api/admin/projects/${MISSING}` }),
  // An environment unleash-server's open-source edition accepts by name, and neither server has.
  'DELETE /api/admin/projects/:project/environments/:environment': () => ({
    url: '/api/admin/projects/default/environments/default',
  }),
  // JSON patches and sort orders are arrays.
  'PATCH /api/admin/projects/:project/features/:feature': () => ({
    url: `/api/admin/projects/default/features/${MISSING}`,
    body: [],
  }),
  'PATCH /api/admin/projects/:project/features/:feature/environments/:environment/variants':
    () => ({
      url: `/api/admin/projects/default/features/${MISSING}/environments/development/variants`,
      body: [],
    }),
  'PUT /api/admin/projects/:project/features/:feature/environments/:environment/variants': () => ({
    url: `/api/admin/projects/default/features/${MISSING}/environments/development/variants`,
    body: [],
  }),
  'PATCH /api/admin/projects/:project/features/:feature/environments/:environment/strategies/:strategyId':
    () => ({
      url: `/api/admin/projects/default/features/${MISSING}/environments/development/strategies/${PARAMS.strategyId}`,
      body: [],
    }),
  'POST /api/admin/projects/:project/features/:feature/environments/:environment/strategies/set-sort-order':
    () => ({
      url: `/api/admin/projects/default/features/${MISSING}/environments/development/strategies/set-sort-order`,
      body: [],
    }),
};

const WRITES = new Set(['POST', 'PUT', 'PATCH']);

/** The default probe: PARAMS in the path, `{}` as the body of a write. */
function defaultProbe(method: string, route: string): Probe {
  const url = route.replace(/:(\w+)/g, (_, param: string) => {
    const value = PARAMS[param];
    if (value === undefined) {
      throw new Error(
        `${method} ${route}: name a value for :${param} in PARAMS or a probe in PROBES`,
      );
    }
    return value;
  });
  return WRITES.has(method) ? { url, body: {} } : { url };
}

/** An admin route: `METHOD /path/:param` as flags-server declares it. */
interface Route {
  readonly method: string;
  readonly path: string;
}
const routeKey = (route: Route) => `${route.method} ${route.path}`;

/**
 * The routes behind flags-server's admin guard (its `onRequest` hook `checkAdmin`), read from
 * Fastify's route tree (`printRoutes` with each route's `onRequest` hooks). HEAD is left out: it
 * is GET's.
 */
function guardedRoutes(app: FastifyInstance): Route[] {
  const tree = app.printRoutes({ commonPrefix: false, includeMeta: ['onRequest'] });
  const routes: Route[] = [];
  // Each node line: tree drawing, a path segment (relative to its parent), its methods; the meta
  // lines under it (`• (onRequest) [...]`) name its hooks. A node's depth is its indent / 4.
  const segments: string[] = [];
  let current: { path: string; methods: string[] } | undefined;
  for (const line of tree.split('\n')) {
    const meta = /^[│\s]*• \(onRequest\) (.*)$/.exec(line);
    if (meta) {
      if (current && meta[1]!.includes('"checkAdmin()"')) {
        for (const method of current.methods) {
          if (method !== 'HEAD') routes.push({ method, path: current.path });
        }
      }
      continue;
    }
    const node = /^([│├└─\s]*)(\S.*?) \(([A-Z, ]+)\)$/.exec(line);
    if (!node) continue;
    const depth = node[1]!.length / 4;
    segments.length = depth - 1;
    segments.push(node[2]!);
    current = { path: segments.join(''), methods: node[3]!.split(', ') };
  }
  return routes;
}

interface Answer {
  readonly status: number;
  /** The error's name or message, for the printout. */
  readonly says: string;
}

/** `-` refused (401, 403), `y` admitted, `!` rate-limited (which says nothing about a role). */
const mark = (answer: Answer) =>
  answer.status === 401 || answer.status === 403 ? '-' : answer.status === 429 ? '!' : 'y';

async function send(
  baseUrl: string,
  method: string,
  probe: Probe,
  credential: Record<string, string>,
): Promise<Answer> {
  const response = await fetch(`${baseUrl}${probe.url}`, {
    method,
    headers: {
      ...credential,
      ...(probe.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(probe.body === undefined ? {} : { body: JSON.stringify(probe.body) }),
    redirect: 'manual',
    signal: AbortSignal.timeout(15_000),
  });
  // An admitted event stream stays open: its status is the answer.
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, says: 'event stream' };
  }
  const text = await response.text();
  let says = text.slice(0, 120);
  try {
    const body = JSON.parse(text) as { name?: string; message?: string };
    says = [body.name, body.message].filter(Boolean).join(': ').slice(0, 160) || says;
  } catch {
    // Text stays text.
  }
  return { status: response.status, says };
}

/** A server under comparison, with a credential per caller. */
interface Target {
  readonly url: string;
  readonly credentials: Readonly<Record<Caller, Record<string, string>>>;
  readonly fixtures: Fixtures;
  stop(): Promise<void>;
}

const PASSWORD = `Role-Matrix-${randomBytes(6).toString('hex')}!`;
const ROLES = ['Admin', 'Editor', 'Viewer'] as const;

/** JSON over HTTP with `credential`; fails unless the status is `expected`. */
async function call(
  baseUrl: string,
  credential: Record<string, string>,
  method: string,
  path: string,
  body: unknown,
  expected: number,
): Promise<{ json: unknown; cookie: string }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...credential, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  assert.equal(response.status, expected, `${method} ${path}: ${text}`);
  const cookie = response.headers
    .getSetCookie()
    .map((header) => header.split(';')[0])
    .join('; ');
  return { json: text ? JSON.parse(text) : undefined, cookie };
}

/**
 * Users Admin, Editor and Viewer made with the admin token, each signed in (a session cookie)
 * and with a personal access token made in that session.
 */
async function signIn(
  baseUrl: string,
  adminToken: string,
): Promise<Record<Caller, Record<string, string>>> {
  const admin = { authorization: adminToken };
  const credentials: Partial<Record<Caller, Record<string, string>>> = {
    'admin API token': admin,
  };
  for (const role of ROLES) {
    const username = `role-matrix-${role.toLowerCase()}`;
    await call(
      baseUrl,
      admin,
      'POST',
      '/api/admin/user-admin',
      { username, password: PASSWORD, rootRole: role },
      201,
    );
    const { cookie } = await call(
      baseUrl,
      {},
      'POST',
      '/auth/simple/login',
      { username, password: PASSWORD },
      200,
    );
    const { json } = await call(
      baseUrl,
      { cookie },
      'POST',
      '/api/admin/user/tokens',
      { description: 'role matrix', expiresAt: '2999-01-01T00:00:00Z' },
      201,
    );
    credentials[`${role} session`] = { cookie };
    credentials[`${role} token (PAT)`] = { authorization: (json as { secret: string }).secret };
  }
  return credentials as Record<Caller, Record<string, string>>;
}

/** The flag and segments the probes need, made with the admin token. */
async function prepare(baseUrl: string, adminToken: string): Promise<Fixtures> {
  const admin = { authorization: adminToken };
  await call(baseUrl, admin, 'POST', '/api/admin/projects/default/features', { name: FLAG }, 201);
  const segment = async (name: string) => {
    const { json } = await call(
      baseUrl,
      admin,
      'POST',
      '/api/admin/segments',
      { name, constraints: [] },
      201,
    );
    return (json as { id: number }).id;
  };
  let deleted = 0;
  return {
    segmentId: await segment('role-matrix-kept'),
    newSegment: () => segment(`role-matrix-deleted-${++deleted}`),
  };
}

/**
 * unleash-server's rate limits, raised: a 429 says nothing about a role (its limit on POSTs under
 * /api/admin/user-admin is 20 a minute, and it counts before the permission check).
 */
const GENEROUS_LIMITS = {
  CREATE_USER_RATE_LIMIT_PER_MINUTE: '10000',
  SIMPLE_LOGIN_LIMIT_PER_MINUTE: '10000',
  PASSWORD_RESET_LIMIT_PER_MINUTE: '10000',
  SEARCH_FEATURES_RATE_LIMIT_PER_MINUTE: '10000',
};

async function unleashTarget(): Promise<Target> {
  const unleash = await startUnleashServer({ env: GENEROUS_LIMITS });
  try {
    return {
      url: unleash.url,
      credentials: await signIn(unleash.url, unleash.adminToken),
      fixtures: await prepare(unleash.url, unleash.adminToken),
      stop: () => unleash.stop(),
    };
  } catch (error) {
    await unleash.stop();
    throw error;
  }
}

const FLAGS_SERVER_ADMIN = `*:*.${randomBytes(16).toString('hex')}`;

async function flagsServerTarget(): Promise<{ target: Target; app: FastifyInstance }> {
  const config = loadConfig(
    {},
    {
      port: 0,
      host: '127.0.0.1',
      adminTokens: [FLAGS_SERVER_ADMIN],
      logLevel: 'warn',
      loginsPerMinute: 10_000,
    },
  );
  const db: Database = await openDatabase({ databaseUrl: undefined, dataDir: undefined });
  let app: FastifyInstance | undefined;
  const stop = async () => {
    await app?.close();
    await db.close();
  };
  try {
    app = await buildApp(config, { db, logger: false });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return {
      app,
      target: {
        url,
        credentials: await signIn(url, FLAGS_SERVER_ADMIN),
        fixtures: await prepare(url, FLAGS_SERVER_ADMIN),
        stop,
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One route's answers on one server, per caller. */
type Answers = Record<Caller, Answer>;

async function probeAll(target: Target, route: Route): Promise<Answers> {
  const answers: Partial<Answers> = {};
  const make = PROBES[routeKey(route)];
  for (const caller of CALLERS) {
    const probe = make ? await make(target.fixtures) : defaultProbe(route.method, route.path);
    answers[caller] = await send(target.url, route.method, probe, target.credentials[caller]);
  }
  return answers as Answers;
}

/** The row a server's answers make. */
function rowOf(answers: Answers): Row {
  const marks = CALLERS.map((caller) => mark(answers[caller]));
  return `${marks[0]}${marks[1]} ${marks[2]}${marks[3]} ${marks[4]}${marks[5]} ${marks[6]}`;
}

/** unleash-server answers a path it has no route for with this 404. */
const notServed = (answers: Answers) =>
  answers['admin API token'].status === 404 &&
  /is not available/.test(answers['admin API token'].says);

interface Result {
  readonly route: Route;
  readonly ours: Answers;
  readonly theirs: Answers;
}

/** What is wrong with a route's answers, or undefined when both servers decide as they should. */
function problemOf({ route, ours, theirs }: Result): string | undefined {
  const key = routeKey(route);
  const only = FLAGS_ONLY[key];
  if (only !== undefined) {
    if (only.answeredBy === undefined && !notServed(theirs)) {
      return 'unleash-server serves it now: take it out of FLAGS_ONLY';
    }
    return rowOf(ours) === only.row ? undefined : `FLAGS_ONLY expects ${only.row}`;
  }
  if (notServed(theirs)) return 'unleash-server does not serve it: list it in FLAGS_ONLY';
  const kept = KEPT[key];
  if (kept === undefined) {
    return rowOf(ours) === rowOf(theirs) ? undefined : 'the servers decide differently';
  }
  return rowOf(ours) === kept.ours && rowOf(theirs) === kept.theirs
    ? undefined
    : `KEPT expects ${kept.ours} | ${kept.theirs}`;
}

/**
 * Every route's rows, those with a problem marked `<<` and every answer under them (every
 * route's answers with `everyAnswer`): the printout on failure.
 */
function printMatrix(
  results: readonly Result[],
  problems: ReadonlyMap<string, string>,
  everyAnswer = false,
): string {
  const width = Math.max(...results.map(({ route }) => routeKey(route).length));
  const lines = [
    `rows: ${CALLERS.join(', ')} (y admitted, - refused); flags-server | unleash-server`,
  ];
  for (const { route, ours, theirs } of results) {
    const key = routeKey(route);
    const problem = problems.get(key);
    const marked = problem === undefined ? '' : `  << ${problem}`;
    lines.push(
      `${key.padEnd(width)}  ${rowOf(ours)} | ${notServed(theirs) ? 'not served' : rowOf(theirs)}${marked}`,
    );
    if (!everyAnswer && problem === undefined) continue;
    for (const caller of CALLERS) {
      const a = ours[caller];
      const b = theirs[caller];
      lines.push(`    ${caller.padEnd(20)} ${a.status} ${a.says}  |  ${b.status} ${b.says}`);
    }
  }
  return lines.join('\n');
}

describe(
  `flags-server's role matrix against unleash-server ${UNLEASH_VERSION}`,
  { skip: unleashServerSkip },
  () => {
    const targets: Target[] = [];
    let routes: Route[] = [];
    const results: Result[] = [];

    before(async () => {
      const [flags, unleash] = await Promise.all([flagsServerTarget(), unleashTarget()]);
      targets.push(flags.target, unleash);
      routes = guardedRoutes(flags.app);
      for (const route of routes) {
        const [ours, theirs] = await Promise.all([
          probeAll(flags.target, route),
          probeAll(unleash, route),
        ]);
        results.push({ route, ours, theirs });
      }
    });
    after(async () => {
      await Promise.all(targets.map((target) => target.stop()));
    });

    it('finds the admin routes', () => {
      // The guard's hook name is what the route tree shows; a renamed hook would empty the list.
      assert.ok(routes.length > 50, `only ${routes.length} guarded routes found`);
      for (const path of ['/api/admin/user-admin', '/api/admin/api-tokens', '/api/admin/roles']) {
        assert.ok(
          routes.some((route) => route.path === path),
          `${path} is not among the guarded routes`,
        );
      }
    });

    it('decides every route as unleash-server does, or as listed', (t) => {
      // ROLE_MATRIX_PRINT=1: the whole matrix with every answer, also when it passes.
      const problems = new Map<string, string>();
      for (const result of results) {
        const problem = problemOf(result);
        if (problem !== undefined) problems.set(routeKey(result.route), problem);
      }
      if (process.env.ROLE_MATRIX_PRINT) {
        for (const line of printMatrix(results, problems, true).split('\n')) t.diagnostic(line);
      }
      assert.equal(problems.size, 0, `\n${printMatrix(results, problems)}`);
    });

    it('lists no route flags-server no longer serves', () => {
      const served = new Set(routes.map(routeKey));
      const stale = [
        ...Object.keys(KEPT),
        ...Object.keys(FLAGS_ONLY),
        ...Object.keys(PROBES),
      ].filter((key) => !served.has(key));
      assert.deepEqual(stale, []);
    });
  },
);
