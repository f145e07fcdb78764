import type { Actor } from '../auth/actor.js';
import { maskToken } from '../config/load.js';
import type { Queryable, Transaction } from '../db/database.js';
import { type NewEvent, recordEvents } from '../features/events/event-store.js';
import { EVENT_TYPES } from '../features/events/event-types.js';
import { issuePasswordLink } from '../features/users/password-links.js';
import { createUser, setPasswordHash, setRootRole } from '../features/users/user-store.js';
import { bumpTokenRevision } from '../revision.js';
import type { Plan } from './plan.js';
import {
  type ApiTokenRecord,
  type Constraint,
  emptyRecords,
  type FlagEnvironment,
  type FlagRecord,
  isoTime,
  normalConstraint,
  type RecordsByKind,
  userKey,
} from './records.js';

const json = (value: unknown) => JSON.stringify(value);

/** A user of flags-server as the copy compares them. */
export interface TargetUser {
  readonly id: number;
  readonly passwordHash: string | null;
}

/** What flags-server holds, in the records' shape. */
export interface TargetInstance {
  readonly records: RecordsByKind;
  /** Users by the key of their record. */
  readonly users: ReadonlyMap<string, TargetUser>;
  /** API tokens created from FLAGS_*_TOKENS (left as they are), by the hash of their secret. */
  readonly configuredTokens: ReadonlySet<string>;
}

/** Reads everything the copy compares from flags-server's database. */
export async function readTarget(db: Queryable): Promise<TargetInstance> {
  const records = emptyRecords();
  const [
    environments,
    projects,
    projectEnvironments,
    featureTypes,
    tagTypes,
    tags,
    contextFields,
    strategies,
    segments,
    tokens,
    users,
  ] = await Promise.all([
    db.query<{ name: string; type: string; sort_order: number; enabled: boolean }>(
      'SELECT name, type, sort_order, enabled FROM environments',
    ),
    db.query<{ id: string; name: string; description: string | null }>(
      'SELECT id, name, description FROM projects',
    ),
    db.query<{ project_id: string; environment_name: string }>(
      'SELECT project_id, environment_name FROM project_environments ORDER BY environment_name',
    ),
    db.query<{
      id: string;
      name: string;
      description: string | null;
      lifetime_days: number | null;
    }>('SELECT id, name, description, lifetime_days FROM feature_types'),
    db.query<{
      name: string;
      description: string | null;
      icon: string | null;
      color: string | null;
    }>('SELECT name, description, icon, color FROM tag_types'),
    db.query<{ type: string; value: string }>('SELECT type, value FROM tags'),
    db.query<{
      name: string;
      description: string | null;
      stickiness: boolean;
      sort_order: number;
      legal_values: { value: string; description?: string }[];
    }>('SELECT name, description, stickiness, sort_order, legal_values FROM context_fields'),
    db.query<{
      name: string;
      title: string | null;
      description: string | null;
      parameters: unknown[];
      deprecated: boolean;
    }>(
      'SELECT name, title, description, parameters, deprecated FROM strategies WHERE NOT built_in',
    ),
    db.query<{
      id: number;
      name: string;
      description: string | null;
      project: string | null;
      constraints: Record<string, unknown>[];
    }>('SELECT id, name, description, project, constraints FROM segments'),
    db.query<{
      secret_hash: string;
      token_name: string;
      type: ApiTokenRecord['type'];
      environment: string | null;
      projects: string[];
      expires_at: Date | string | null;
      source: string;
    }>(
      'SELECT secret_hash, token_name, type, environment, projects, expires_at, source FROM api_tokens',
    ),
    db.query<{
      id: number;
      name: string | null;
      email: string | null;
      username: string | null;
      password_hash: string | null;
      root_role: string | null;
    }>(
      `SELECT u.id, u.name, u.email, u.username, u.password_hash,
              (SELECT r.name FROM role_user ru JOIN roles r ON r.id = ru.role_id
                WHERE ru.user_id = u.id AND r.type = 'root' ORDER BY ru.role_id LIMIT 1) AS root_role
         FROM users u WHERE u.deleted_at IS NULL AND NOT u.is_service ORDER BY u.id`,
    ),
  ]);

  for (const row of environments) {
    records.environments.set(row.name, {
      type: row.type,
      sortOrder: row.sort_order,
      enabled: row.enabled,
    });
  }
  for (const row of projects) {
    records.projects.set(row.id, {
      name: row.name,
      description: row.description,
      environments: projectEnvironments
        .filter((entry) => entry.project_id === row.id)
        .map((entry) => entry.environment_name)
        .sort(),
    });
  }
  for (const row of featureTypes) {
    records.featureTypes.set(row.id, {
      name: row.name,
      description: row.description,
      lifetimeDays: row.lifetime_days,
    });
  }
  for (const row of tagTypes) {
    records.tagTypes.set(row.name, {
      description: row.description,
      icon: row.icon,
      color: row.color,
    });
  }
  for (const row of tags) records.tags.set(`${row.type}:${row.value}`, {});
  for (const row of contextFields) {
    records.contextFields.set(row.name, {
      description: row.description,
      stickiness: row.stickiness,
      sortOrder: row.sort_order,
      legalValues: row.legal_values.map((entry) => ({
        value: entry.value,
        ...(entry.description ? { description: entry.description } : {}),
      })),
    });
  }
  for (const row of strategies) {
    records.strategies.set(row.name, {
      title: row.title,
      description: row.description,
      parameters: row.parameters,
      deprecated: row.deprecated,
    });
  }
  const segmentNames = new Map<number, string>();
  for (const row of segments) {
    segmentNames.set(row.id, row.name);
    records.segments.set(row.name, {
      description: row.description,
      project: row.project,
      constraints: row.constraints.map(normalConstraint),
    });
  }
  await readFlags(db, records.flags, segmentNames);

  const configuredTokens = new Set<string>();
  for (const row of tokens) {
    if (row.source === 'config') configuredTokens.add(row.secret_hash);
    records.apiTokens.set(row.secret_hash, {
      tokenName: row.token_name,
      type: row.type,
      environment: row.environment,
      projects: [...row.projects].sort(),
      expiresAt: row.expires_at === null ? null : isoTime(row.expires_at),
    });
  }
  const targetUsers = new Map<string, TargetUser>();
  for (const row of users) {
    const record = {
      name: row.name,
      email: row.email,
      username: row.username,
      rootRole: row.root_role ?? 'Viewer',
    };
    const user = { id: row.id, passwordHash: row.password_hash };
    // Found by email or by username, whichever the source has.
    for (const key of [userKey(row.email, null), userKey(null, row.username)]) {
      if (key === undefined || targetUsers.has(key)) continue;
      records.users.set(key, record);
      targetUsers.set(key, user);
    }
  }
  return { records, users: targetUsers, configuredTokens };
}

async function readFlags(
  db: Queryable,
  flags: Map<string, FlagRecord>,
  segmentNames: ReadonlyMap<number, string>,
): Promise<void> {
  const [features, states, strategies, tags, dependencies] = await Promise.all([
    db.query<{
      name: string;
      project: string;
      type: string;
      description: string | null;
      stale: boolean;
      impression_data: boolean;
      created_at: Date | string;
      archived_at: Date | string | null;
    }>(
      `SELECT name, project, type, description, stale, impression_data, created_at, archived_at
         FROM features`,
    ),
    db.query<{ feature_name: string; environment: string; enabled: boolean; variants: unknown[] }>(
      'SELECT feature_name, environment, enabled, variants FROM feature_environments',
    ),
    db.query<{
      feature_name: string;
      environment: string;
      strategy_name: string;
      title: string | null;
      disabled: boolean;
      parameters: Record<string, unknown>;
      constraints: Record<string, unknown>[];
      variants: unknown[];
      segments: number[];
    }>(
      `SELECT feature_name, environment, strategy_name, title, disabled, parameters, constraints,
              variants, segments
         FROM feature_strategies ORDER BY feature_name, environment, sort_order, position, created_at`,
    ),
    db.query<{ feature_name: string; tag_type: string; tag_value: string }>(
      'SELECT feature_name, tag_type, tag_value FROM feature_tags',
    ),
    db.query<{ child: string; parent: string; enabled: boolean; variants: string[] }>(
      'SELECT child, parent, enabled, variants FROM feature_dependencies ORDER BY child, parent',
    ),
  ]);
  const environments = new Map<string, Record<string, FlagEnvironment>>();
  const environmentOf = (name: string, environment: string): FlagEnvironment => {
    const own = environments.get(name) ?? {};
    environments.set(name, own);
    own[environment] ??= { enabled: false, variants: [], strategies: [] };
    return own[environment];
  };
  for (const row of states) {
    const own = environmentOf(row.feature_name, row.environment);
    Object.assign(own, { enabled: row.enabled, variants: row.variants });
  }
  for (const row of strategies) {
    const own = environmentOf(row.feature_name, row.environment);
    (own.strategies as unknown[]).push({
      name: row.strategy_name,
      title: row.title,
      disabled: row.disabled,
      parameters: Object.fromEntries(
        Object.entries(row.parameters).map(([key, value]) => [key, String(value)]),
      ),
      constraints: row.constraints.map(normalConstraint) as Constraint[],
      variants: row.variants,
      segments: row.segments.map((id) => segmentNames.get(id) ?? `#${id}`).sort(),
    });
  }
  const tagsOf = new Map<string, string[]>();
  for (const row of tags) {
    tagsOf.set(row.feature_name, [
      ...(tagsOf.get(row.feature_name) ?? []),
      `${row.tag_type}:${row.tag_value}`,
    ]);
  }
  const dependenciesOf = new Map<string, FlagRecord['dependencies'][number][]>();
  for (const row of dependencies) {
    dependenciesOf.set(row.child, [
      ...(dependenciesOf.get(row.child) ?? []),
      { parent: row.parent, enabled: row.enabled, variants: row.variants },
    ]);
  }
  for (const row of features) {
    flags.set(row.name, {
      project: row.project,
      type: row.type,
      description: row.description,
      stale: row.stale,
      impressionData: row.impression_data,
      createdAt: isoTime(row.created_at),
      archivedAt: row.archived_at === null ? null : isoTime(row.archived_at),
      tags: (tagsOf.get(row.name) ?? []).sort(),
      dependencies: dependenciesOf.get(row.name) ?? [],
      environments: environments.get(row.name) ?? {},
    });
  }
}

/** What the write needs beyond the plan. */
export interface WriteOptions {
  readonly actor: Pick<Actor, 'name' | 'userId'>;
  /** Token secrets by record key. */
  readonly secrets: ReadonlyMap<string, string>;
  /** Password hashes to copy, by user record key (from `--database`). */
  readonly passwordHashes: ReadonlyMap<string, string>;
  /** Where password links point (flags-server's public URL). */
  readonly publicUrl: URL;
  readonly now: Date;
}

/** A link printed for a user created without a password. */
export interface PasswordLinkIssued {
  readonly user: string;
  readonly link: string;
}

/**
 * Writes `plan`'s creates and updates in the caller's transaction, kind after kind, with the
 * events the admin API would record. Returns the password links of users created without one.
 */
export async function writePlan(
  tx: Transaction,
  plan: Plan,
  options: WriteOptions,
): Promise<PasswordLinkIssued[]> {
  const by = options.actor;
  const events: NewEvent[] = [];
  const changed = <K extends keyof RecordsByKind>(kind: K) =>
    plan.changes[kind].filter((change) => change.action !== 'skip');

  for (const change of changed('environments')) {
    const record = change.record;
    await tx.query(
      `INSERT INTO environments (name, type, sort_order, enabled) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO UPDATE
         SET type = EXCLUDED.type, sort_order = EXCLUDED.sort_order, enabled = EXCLUDED.enabled`,
      [change.key, record.type, record.sortOrder, record.enabled],
    );
    events.push({
      type:
        change.action === 'create'
          ? EVENT_TYPES.environmentCreated
          : EVENT_TYPES.environmentUpdated,
      by,
      environment: change.key,
      data: { name: change.key, ...record },
      ...(change.before ? { preData: { name: change.key, ...change.before } } : {}),
    });
  }

  for (const change of changed('projects')) {
    const record = change.record;
    await tx.query(
      `INSERT INTO projects (id, name, description) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description`,
      [change.key, record.name, record.description],
    );
    const before = new Set(change.before?.environments ?? []);
    for (const environment of record.environments) {
      if (before.has(environment)) continue;
      await tx.query(
        `INSERT INTO project_environments (project_id, environment_name) VALUES ($1, $2)
         ON CONFLICT DO NOTHING`,
        [change.key, environment],
      );
      if (change.action === 'update') {
        events.push({
          type: EVENT_TYPES.projectEnvironmentAdded,
          by,
          project: change.key,
          environment,
        });
      }
    }
    events.push({
      type: change.action === 'create' ? EVENT_TYPES.projectCreated : EVENT_TYPES.projectUpdated,
      by,
      project: change.key,
      data: { id: change.key, ...record },
      ...(change.before ? { preData: { id: change.key, ...change.before } } : {}),
    });
  }

  for (const change of changed('featureTypes')) {
    const record = change.record;
    await tx.query(
      `INSERT INTO feature_types (id, name, description, lifetime_days) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET lifetime_days = EXCLUDED.lifetime_days`,
      [change.key, record.name, record.description, record.lifetimeDays],
    );
  }

  for (const change of changed('tagTypes')) {
    const record = change.record;
    await tx.query(
      `INSERT INTO tag_types (name, description, icon, color) VALUES ($1, $2, $3, $4)
       ON CONFLICT (name) DO UPDATE
         SET description = EXCLUDED.description, icon = EXCLUDED.icon, color = EXCLUDED.color`,
      [change.key, record.description, record.icon, record.color],
    );
    events.push({
      type: change.action === 'create' ? EVENT_TYPES.tagTypeCreated : EVENT_TYPES.tagTypeUpdated,
      by,
      data: { name: change.key, ...record },
    });
  }

  const newTags = changed('tags').map((change) => {
    const colon = change.key.indexOf(':');
    return { type: change.key.slice(0, colon), value: change.key.slice(colon + 1) };
  });
  if (newTags.length > 0) {
    await tx.query(
      `INSERT INTO tags (type, value)
       SELECT x.type, x.value FROM jsonb_to_recordset($1::jsonb) AS x(type text, value text)
       ON CONFLICT DO NOTHING`,
      [json(newTags)],
    );
    for (const tag of newTags) events.push({ type: EVENT_TYPES.tagCreated, by, data: tag });
  }

  for (const change of changed('contextFields')) {
    const record = change.record;
    await tx.query(
      `INSERT INTO context_fields (name, description, stickiness, sort_order, legal_values)
       VALUES ($1, $2, $3, $4, $5::jsonb)
       ON CONFLICT (name) DO UPDATE
         SET description = EXCLUDED.description, stickiness = EXCLUDED.stickiness,
             sort_order = EXCLUDED.sort_order, legal_values = EXCLUDED.legal_values`,
      [
        change.key,
        record.description,
        record.stickiness,
        record.sortOrder,
        json(record.legalValues),
      ],
    );
    events.push({
      type:
        change.action === 'create'
          ? EVENT_TYPES.contextFieldCreated
          : EVENT_TYPES.contextFieldUpdated,
      by,
      data: { name: change.key, ...record },
      ...(change.before ? { preData: { name: change.key, ...change.before } } : {}),
    });
  }

  for (const change of changed('strategies')) {
    const record = change.record;
    await tx.query(
      `INSERT INTO strategies (name, title, description, parameters, deprecated, built_in)
       VALUES ($1, $2, $3, $4::jsonb, $5, false)
       ON CONFLICT (name) DO UPDATE
         SET title = EXCLUDED.title, description = EXCLUDED.description,
             parameters = EXCLUDED.parameters, deprecated = EXCLUDED.deprecated`,
      [change.key, record.title, record.description, json(record.parameters), record.deprecated],
    );
    events.push({
      type: change.action === 'create' ? EVENT_TYPES.strategyCreated : EVENT_TYPES.strategyUpdated,
      by,
      data: { name: change.key, ...record },
    });
  }

  for (const change of changed('segments')) {
    const record = change.record;
    const [row] = await tx.query<{ id: number }>(
      `INSERT INTO segments (name, description, project, constraints) VALUES ($1, $2, $3, $4::jsonb)
       ON CONFLICT (name) DO UPDATE
         SET description = EXCLUDED.description, project = EXCLUDED.project,
             constraints = EXCLUDED.constraints
       RETURNING id`,
      [change.key, record.description, record.project, json(record.constraints)],
    );
    events.push({
      type: change.action === 'create' ? EVENT_TYPES.segmentCreated : EVENT_TYPES.segmentUpdated,
      by,
      project: record.project,
      data: { id: row?.id, name: change.key, ...record },
    });
  }

  await writeFlags(tx, plan, events, by);

  let tokensChanged = false;
  for (const change of changed('apiTokens')) {
    const record = change.record;
    const secret = options.secrets.get(change.key);
    if (secret === undefined) continue;
    tokensChanged = true;
    await tx.query(
      `INSERT INTO api_tokens (secret_hash, secret_masked, token_name, type, environment, projects,
                               expires_at, source)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, 'api')
       ON CONFLICT (secret_hash) DO UPDATE
         SET token_name = EXCLUDED.token_name, type = EXCLUDED.type,
             environment = EXCLUDED.environment, projects = EXCLUDED.projects,
             expires_at = EXCLUDED.expires_at`,
      [
        change.key,
        maskToken(secret),
        record.tokenName,
        record.type,
        record.environment,
        json(record.projects),
        record.expiresAt,
      ],
    );
    events.push({
      type: change.action === 'create' ? EVENT_TYPES.apiTokenCreated : EVENT_TYPES.apiTokenUpdated,
      by,
      environment: record.environment,
      data: { ...record, secret: maskToken(secret) },
    });
  }
  // Every flags-server process reloads its tokens at commit, as after an admin API change.
  if (tokensChanged) await bumpTokenRevision(tx);

  const roles = new Map(
    (
      await tx.query<{ id: number; name: string }>(
        "SELECT id, name FROM roles WHERE type = 'root' AND project IS NULL",
      )
    ).map((row) => [row.name, row.id]),
  );
  const links: PasswordLinkIssued[] = [];
  for (const change of changed('users')) {
    const record = change.record;
    const roleId = roles.get(record.rootRole) ?? (roles.get('Viewer') as number);
    const hash = options.passwordHashes.get(change.key) ?? null;
    const who = record.email ?? record.username ?? change.key;
    if (change.action === 'create') {
      const user = await createUser(tx, {
        name: record.name,
        email: record.email,
        username: record.username,
        passwordHash: hash,
        rootRoleId: roleId,
      });
      events.push({
        type: EVENT_TYPES.userCreated,
        by,
        data: { id: user.id, name: record.name, email: record.email, rootRole: record.rootRole },
      });
      if (hash === null) {
        const link = await issuePasswordLink(tx, {
          userId: user.id,
          kind: 'welcome',
          by,
          at: options.now,
          publicUrl: options.publicUrl,
        });
        links.push({ user: who, link });
      }
      continue;
    }
    const target = plan.targetUsers.get(change.key);
    if (target === undefined) continue;
    const before = change.before;
    if (
      before &&
      (before.name !== record.name ||
        before.email !== record.email ||
        before.username !== record.username)
    ) {
      await tx.query('UPDATE users SET name = $2, email = $3, username = $4 WHERE id = $1', [
        target.id,
        record.name,
        record.email,
        record.username,
      ]);
    }
    if (before?.rootRole !== record.rootRole) await setRootRole(tx, target.id, roleId);
    if (hash !== null && plan.passwordUpdates.has(change.key)) {
      await setPasswordHash(tx, target.id, hash);
    }
    events.push({
      type: EVENT_TYPES.userUpdated,
      by,
      data: { id: target.id, name: record.name, email: record.email, rootRole: record.rootRole },
      ...(before ? { preData: { id: target.id, ...before } } : {}),
    });
  }

  recordEvents(tx, events);
  return links;
}

/** The flags created or updated: rows replaced whole for each, in a few statements. */
async function writeFlags(
  tx: Transaction,
  plan: Plan,
  events: NewEvent[],
  by: Pick<Actor, 'name' | 'userId'>,
): Promise<void> {
  const changes = plan.changes.flags.filter((change) => change.action !== 'skip');
  if (changes.length === 0) return;
  const names = json(changes.map((change) => change.key));
  await tx.query(
    `INSERT INTO features (name, project, type, description, stale, impression_data, created_at,
                           archived_at)
     SELECT x.name, x.project, x.type, x.description, x.stale, x.impression_data, x.created_at,
            x.archived_at
       FROM jsonb_to_recordset($1::jsonb)
         AS x(name text, project text, type text, description text, stale boolean,
              impression_data boolean, created_at timestamptz, archived_at timestamptz)
     ON CONFLICT (name) DO UPDATE
       SET project = EXCLUDED.project, type = EXCLUDED.type, description = EXCLUDED.description,
           stale = EXCLUDED.stale, impression_data = EXCLUDED.impression_data,
           created_at = EXCLUDED.created_at, archived_at = EXCLUDED.archived_at,
           version = features.version + 1`,
    [
      json(
        changes.map(({ key, record }) => ({
          name: key,
          project: record.project,
          type: record.type,
          description: record.description,
          stale: record.stale,
          impression_data: record.impressionData,
          created_at: record.createdAt,
          archived_at: record.archivedAt,
        })),
      ),
    ],
  );
  // Environments, strategies, tags and dependencies of these flags become exactly the source's.
  for (const table of ['feature_strategies', 'feature_environments', 'feature_tags']) {
    await tx.query(
      `DELETE FROM ${table} WHERE feature_name IN (SELECT jsonb_array_elements_text($1::jsonb))`,
      [names],
    );
  }
  await tx.query(
    'DELETE FROM feature_dependencies WHERE child IN (SELECT jsonb_array_elements_text($1::jsonb))',
    [names],
  );
  const segmentIds = new Map(
    (await tx.query<{ id: number; name: string }>('SELECT id, name FROM segments')).map((row) => [
      row.name,
      row.id,
    ]),
  );
  const states: unknown[] = [];
  const strategies: unknown[] = [];
  const tags: unknown[] = [];
  const dependencies: unknown[] = [];
  for (const { key, record } of changes) {
    for (const [environment, state] of Object.entries(record.environments)) {
      states.push({
        feature_name: key,
        environment,
        enabled: state.enabled,
        variants: state.variants,
      });
      state.strategies.forEach((strategy, index) => {
        strategies.push({
          feature_name: key,
          environment,
          strategy_name: strategy.name,
          title: strategy.title,
          disabled: strategy.disabled,
          sort_order: index,
          position: index,
          parameters: strategy.parameters,
          constraints: strategy.constraints,
          variants: strategy.variants,
          segments: strategy.segments
            .map((name) => segmentIds.get(name))
            .filter((id) => id !== undefined),
        });
      });
    }
    for (const tag of record.tags) {
      const colon = tag.indexOf(':');
      tags.push({
        feature_name: key,
        tag_type: tag.slice(0, colon),
        tag_value: tag.slice(colon + 1),
      });
    }
    for (const dependency of record.dependencies) {
      dependencies.push({ child: key, ...dependency });
    }
  }
  await tx.query(
    `INSERT INTO feature_environments (feature_name, environment, enabled, variants)
     SELECT x.feature_name, x.environment, x.enabled, x.variants
       FROM jsonb_to_recordset($1::jsonb)
         AS x(feature_name text, environment text, enabled boolean, variants jsonb)`,
    [json(states)],
  );
  await tx.query(
    `INSERT INTO feature_strategies
       (feature_name, environment, strategy_name, title, disabled, sort_order, position,
        parameters, constraints, variants, segments)
     SELECT x.feature_name, x.environment, x.strategy_name, x.title, x.disabled, x.sort_order,
            x.position, x.parameters, x.constraints, x.variants, x.segments
       FROM jsonb_to_recordset($1::jsonb)
         AS x(feature_name text, environment text, strategy_name text, title text,
              disabled boolean, sort_order integer, position integer, parameters jsonb,
              constraints jsonb, variants jsonb, segments jsonb)`,
    [json(strategies)],
  );
  // A tag a flag carries exists as a tag too.
  await tx.query(
    `INSERT INTO tags (type, value)
     SELECT DISTINCT x.tag_type, x.tag_value
       FROM jsonb_to_recordset($1::jsonb) AS x(feature_name text, tag_type text, tag_value text)
     ON CONFLICT DO NOTHING`,
    [json(tags)],
  );
  await tx.query(
    `INSERT INTO feature_tags (feature_name, tag_type, tag_value)
     SELECT x.feature_name, x.tag_type, x.tag_value
       FROM jsonb_to_recordset($1::jsonb) AS x(feature_name text, tag_type text, tag_value text)`,
    [json(tags)],
  );
  await tx.query(
    `INSERT INTO feature_dependencies (child, parent, enabled, variants)
     SELECT x.child, x.parent, x.enabled, x.variants
       FROM jsonb_to_recordset($1::jsonb)
         AS x(child text, parent text, enabled boolean, variants jsonb)`,
    [json(dependencies)],
  );

  for (const { key, record, before, action } of changes) {
    const base = { by, project: record.project, featureName: key };
    if (action === 'create') {
      events.push({
        ...base,
        type: EVENT_TYPES.featureCreated,
        data: { name: key, ...record, environments: undefined },
      });
    } else {
      events.push({
        ...base,
        type: EVENT_TYPES.featureMetadataUpdated,
        data: { name: key, ...record },
        preData: before && { name: key, ...before },
      });
    }
    for (const [environment, state] of Object.entries(record.environments)) {
      const was = before?.environments[environment]?.enabled ?? false;
      if (was === state.enabled) continue;
      events.push({
        ...base,
        environment,
        type: state.enabled
          ? EVENT_TYPES.featureEnvironmentEnabled
          : EVENT_TYPES.featureEnvironmentDisabled,
      });
    }
    if (record.archivedAt !== null && (before?.archivedAt ?? null) === null) {
      events.push({ ...base, type: EVENT_TYPES.featureArchived });
    }
    if (record.archivedAt === null && before !== undefined && before.archivedAt !== null) {
      events.push({ ...base, type: EVENT_TYPES.featureRevived });
    }
  }
}
