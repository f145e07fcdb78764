/**
 * The configuration pages, in the order the second navigation bar shows them, each with what a
 * role needs to see it (the API answers a role without it 403 anyway).
 */
import type { ComponentType } from 'preact';
import { html, type Session } from './kit.js';
import { ApiTokensPage } from './pages/api-tokens.js';
import { ContextFieldsPage } from './pages/context-fields.js';
import { EnvironmentsPage } from './pages/environments.js';
import { ProjectsPage } from './pages/projects.js';
import { SegmentsPage } from './pages/segments.js';
import { StrategyTypesPage } from './pages/strategy-types.js';
import { TagTypesPage } from './pages/tag-types.js';
import { UsersPage } from './pages/users.js';
import { may, type Permission } from './resource-page.js';

interface AdminPage {
  /** The first segment of its address (`/projects`). */
  readonly path: string;
  readonly label: string;
  /** What seeing it needs: `read` for everyone, `admin` where the API lists only to Admins. */
  readonly see: Permission;
  readonly page: ComponentType;
}

export const ADMIN_PAGES: readonly AdminPage[] = [
  { path: 'projects', label: 'Projects', see: 'read', page: ProjectsPage },
  { path: 'environments', label: 'Environments', see: 'read', page: EnvironmentsPage },
  { path: 'api-tokens', label: 'API tokens', see: 'admin', page: ApiTokensPage },
  { path: 'users', label: 'Users', see: 'admin', page: UsersPage },
  { path: 'segments', label: 'Segments', see: 'read', page: SegmentsPage },
  { path: 'context-fields', label: 'Context fields', see: 'read', page: ContextFieldsPage },
  { path: 'tag-types', label: 'Tag types', see: 'read', page: TagTypesPage },
  { path: 'strategy-types', label: 'Strategy types', see: 'read', page: StrategyTypesPage },
];

/** The configuration page at `section` the person may see, if any. */
export function adminPageAt(session: Session, section: string | undefined) {
  const found = ADMIN_PAGES.find((entry) => entry.path === section);
  if (!found) return undefined;
  if (may(session, found.see)) return html`<${found.page} />`;
  return html`<h1>${found.label}</h1>
    <p class="notice" role="status">Only Admins see ${found.label.toLowerCase()}: ask one if you need a change here.</p>`;
}

/** The second navigation bar: the configuration pages the person may see. */
export function AdminNav(props: { session: Session; section: string }) {
  return html`<nav class="configure" aria-label="Configure">
    ${ADMIN_PAGES.filter((entry) => may(props.session, entry.see)).map(
      (entry) =>
        html`<a href=${`/${entry.path}`}
          aria-current=${entry.path === props.section ? 'page' : undefined}>${entry.label}</a>`,
    )}
  </nav>`;
}
