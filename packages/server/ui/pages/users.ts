/**
 * Users and invite links (Admins only): add a user with a password or a welcome link, change
 * name, e-mail and role, disable and enable, delete, make a reset-password link; invite links
 * that let anyone holding them sign up with the link's role.
 */
import { api, get } from '../api.js';
import { formatTime, html } from '../kit.js';
import { optional, ResourcePage, type ResourceSpec, type Values } from '../resource-page.js';
import { Secret } from './api-tokens.js';

interface Role {
  id: number;
  name: string;
  type: string;
}

interface User {
  id: number;
  name?: string | null;
  email?: string;
  username?: string | null;
  rootRole?: number;
  seenAt?: string | null;
  createdAt?: string;
  inviteLink?: string;
  disabled?: boolean;
}

interface InviteLink {
  id: number;
  name: string;
  url: string | null;
  enabled: boolean;
  expiresAt: string;
  createdBy: string | null;
  role: Role;
  users?: User[] | null;
}

interface Extra {
  readonly roles: Role[];
}

const rolesExtra = async (): Promise<Extra> => {
  const { roles } = await get<{ roles: Role[] }>('/api/admin/roles');
  return { roles: roles.filter((role) => role.type === 'root') };
};

const roleOptions = (extra: Extra) =>
  extra.roles.map((role) => ({ value: String(role.id), label: role.name }));

const whoIs = (user: User) => user.name || user.username || user.email || `user ${user.id}`;

const DAY_MS = 86_400_000;

/** `datetime-local`'s text for a time `ms` from now. */
const localInput = (ms: number) => {
  const at = new Date(Date.now() + ms);
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

const users: ResourceSpec<User, Extra> = {
  id: 'users',
  title: 'Users',
  level: 2,
  noun: 'user',
  intro:
    'A root role says what each may do: Admins everything, Editors flags and their settings, Viewers read.',
  write: 'admin',
  list: async () => (await get<{ users: User[] }>('/api/admin/user-admin')).users,
  extra: rolesExtra,
  key: (user) => String(user.id),
  label: whoIs,
  columns: [
    { label: 'Name', cell: (user) => user.name ?? '' },
    { label: 'E-mail', cell: (user) => user.email ?? '' },
    { label: 'User name', cell: (user) => user.username ?? '' },
    {
      label: 'Role',
      cell: (user, extra) => extra?.roles.find((role) => role.id === user.rootRole)?.name ?? '',
    },
    { label: 'Last seen', cell: (user) => formatTime(user.seenAt) || 'never' },
    { label: 'Status', cell: (user) => (user.disabled ? 'Disabled' : 'Active') },
  ],
  fields: [
    { name: 'name', label: 'Name', maxLength: 255 },
    { name: 'email', label: 'E-mail', type: 'email', maxLength: 255 },
    {
      name: 'username',
      label: 'User name',
      maxLength: 255,
      createOnly: true,
      hint: 'An e-mail, a user name or both.',
    },
    {
      name: 'rootRole',
      label: 'Role',
      type: 'select',
      required: true,
      initial: (extra) => String(extra.roles.find((role) => role.name === 'Viewer')?.id ?? ''),
      read: (user) => String(user.rootRole ?? ''),
      options: roleOptions,
    },
    {
      name: 'password',
      label: 'Password',
      type: 'password',
      createOnly: true,
      hint: 'Leave empty to get a link where they choose one.',
    },
  ],
  create: (values) =>
    api('POST', '/api/admin/user-admin', {
      ...(optional(values.name) === undefined ? {} : { name: optional(values.name) }),
      ...(optional(values.email) === undefined ? {} : { email: optional(values.email) }),
      ...(optional(values.username) === undefined ? {} : { username: optional(values.username) }),
      ...(values.password ? { password: values.password } : {}),
      rootRole: Number(values.rootRole),
    }),
  created: (answer) => {
    const user = answer as User;
    return user.inviteLink
      ? html`<h2>${whoIs(user)} is added</h2>
          <p>Send them this link: they choose their password there.</p>
          <${Secret} label="Welcome link" value=${user.inviteLink} />`
      : html`<h2>${whoIs(user)} is added</h2><p>They can log in with the password you chose.</p>`;
  },
  update: (user, values: Values) =>
    api('PUT', `/api/admin/user-admin/${user.id}`, {
      ...(optional(values.name) === undefined ? {} : { name: optional(values.name) }),
      ...(optional(values.email) === undefined ? {} : { email: optional(values.email) }),
      rootRole: Number(values.rootRole),
    }),
  remove: (user) => api('DELETE', `/api/admin/user-admin/${user.id}`),
  actions: (user, row) =>
    html`<button type="button" class="secondary" aria-label=${`Reset password of ${whoIs(user)}`}
      onClick=${async () => {
        try {
          const { resetPasswordUrl } = await api<{ resetPasswordUrl: string }>(
            'POST',
            '/api/admin/user-admin/reset-password',
            { id: String(user.id) },
          );
          row.report({
            info: `Send ${whoIs(user)} this link to set a new password: ${resetPasswordUrl}`,
          });
        } catch (failure) {
          row.report({ error: failure });
        }
      }}>Reset password</button>
      <button type="button" class="secondary"
        aria-label=${`${user.disabled ? 'Enable' : 'Disable'} ${whoIs(user)}`}
        onClick=${() =>
          // Disabling ends their sessions and stops their tokens at once; enabling lets them in.
          row.change(() =>
            api('PUT', `/api/admin/user-admin/${user.id}`, { disabled: !user.disabled }),
          )}>${user.disabled ? 'Enable' : 'Disable'}</button>`,
};

const inviteLinks: ResourceSpec<InviteLink, Extra> = {
  id: 'invite-links',
  title: 'Invite links',
  level: 2,
  noun: 'invite link',
  intro:
    'Anyone holding an invite link can sign up, with its role, until it expires or is disabled.',
  write: 'admin',
  list: async () => (await get<{ tokens: InviteLink[] }>('/api/admin/invite-link/tokens')).tokens,
  extra: rolesExtra,
  key: (link) => String(link.id),
  label: (link) => link.name,
  columns: [
    { label: 'Name', cell: (link) => link.name },
    { label: 'Role', cell: (link) => link.role.name },
    { label: 'Expires', cell: (link) => formatTime(link.expiresAt) },
    { label: 'State', cell: (link) => (link.enabled ? 'enabled' : 'disabled') },
    { label: 'Signed up', cell: (link) => (link.users ?? []).map(whoIs).join(', ') },
  ],
  fields: [
    { name: 'name', label: 'Name', required: true, maxLength: 255 },
    {
      name: 'role',
      label: 'Role',
      type: 'select',
      initial: (extra) => String(extra.roles.find((role) => role.name === 'Viewer')?.id ?? ''),
      options: roleOptions,
    },
    {
      name: 'expiresAt',
      label: 'Expires',
      type: 'datetime',
      required: true,
      initial: () => localInput(7 * DAY_MS),
      hint: 'At most a month from now.',
    },
    {
      name: 'allowAdmin',
      label: 'Yes, everyone holding this link becomes an Admin',
      type: 'checkbox',
      when: (values, extra) =>
        extra.roles.find((role) => String(role.id) === values.role)?.name === 'Admin',
    },
  ],
  create: (values) =>
    api('POST', '/api/admin/invite-link/tokens', {
      name: String(values.name ?? '').trim(),
      role: Number(values.role),
      expiresAt: new Date(String(values.expiresAt)).toISOString(),
      ...(values.allowAdmin === true ? { allowAdmin: true } : {}),
    }),
  created: (answer) => {
    const link = answer as InviteLink;
    return html`<h2>Invite link ${link.name} is created</h2>
      <p>Copy it now: it is not shown again.</p>
      <${Secret} label="Invite link" value=${link.url ?? ''} />`;
  },
  actions: (link, row) =>
    row.writable
      ? html`<button type="button" class="secondary"
          aria-label=${`${link.enabled ? 'Disable' : 'Enable'} invite link ${link.name}`}
          onClick=${() =>
            row.change(() =>
              api('PUT', `/api/admin/invite-link/tokens/${link.id}`, { enabled: !link.enabled }),
            )}>${link.enabled ? 'Disable' : 'Enable'}</button>`
      : null,
};

export function UsersPage() {
  return html`<h1>Users and invite links</h1>
    <${ResourcePage} spec=${users} />
    <${ResourcePage} spec=${inviteLinks} />`;
}
