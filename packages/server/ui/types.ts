/** The admin API's shapes this UI reads (unleash-server's). */

export interface Constraint {
  contextName: string;
  operator: string;
  values?: string[];
  value?: string;
  inverted?: boolean;
  caseInsensitive?: boolean;
}

export interface Payload {
  type: string;
  value: string;
}

export interface Variant {
  name: string;
  weight: number;
  weightType?: 'variable' | 'fix';
  stickiness?: string;
  payload?: Payload;
}

export interface Strategy {
  id: string;
  name: string;
  title?: string | null;
  disabled?: boolean | null;
  sortOrder?: number;
  constraints: Constraint[];
  parameters: Record<string, string>;
  variants?: Variant[];
  segments?: number[];
}

export interface FlagEnvironment {
  name: string;
  type: string;
  enabled: boolean;
  strategies: Strategy[];
  variants: Variant[];
}

export interface Tag {
  type: string;
  value: string;
}

export interface Flag {
  name: string;
  project: string;
  type: string;
  description: string | null;
  stale: boolean;
  impressionData: boolean;
  archived?: boolean;
  archivedAt?: string | null;
  createdAt?: string;
  environments: FlagEnvironment[];
  tags: Tag[];
  dependencies: { feature: string; enabled: boolean; variants: string[] }[];
  children: string[];
}

export interface FlagOverview {
  name: string;
  project: string;
  type: string;
  description: string | null;
  stale: boolean;
  createdAt: string;
  archivedAt: string | null;
  environments: { name: string; type: string; enabled: boolean; hasStrategies: boolean }[];
  tags: Tag[];
}

export interface ContextField {
  name: string;
  description?: string;
  stickiness?: boolean;
  legalValues?: { value: string; description?: string }[];
}

export interface Segment {
  id: number;
  name: string;
  description?: string | null;
  project?: string | null;
  constraints: Constraint[];
}

export interface AuditEvent {
  id: number;
  type: string;
  createdBy: string;
  createdAt: string;
  featureName?: string | null;
  project?: string | null;
  environment?: string | null;
  data?: unknown;
  preData?: unknown;
}

export interface Me {
  user: { id: number; name?: string; username?: string; email?: string };
  permissions: { permission: string }[];
}
