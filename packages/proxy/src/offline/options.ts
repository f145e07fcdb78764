import { configSchema, option, splitList, Type } from '@flags/config';

/**
 * The options of `flags-proxy offline`, Unleash Edge's offline mode: flags from a file instead of
 * an upstream. Their variables are Edge's; the proxy's own options apply besides.
 */
export const offlineSchema = Type.Object({
  bootstrapFile: option(Type.String({ minLength: 1 }), {
    env: ['BOOTSTRAP_FILE'],
    required: true,
    doc: 'Offline mode: the JSON file the flags come from, a `/api/client/features` document (`{"features": […]}`) or a map `{"<flag>": {"enabled": true, "variant": "<name>"}}`.',
  }),
  clientTokens: option(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }), {
    env: ['CLIENT_TOKENS'],
    required: true,
    secret: true,
    fromEnv: splitList,
    doc: 'Offline mode: comma-separated tokens server-side SDKs may read `/api/client/features` with; an Unleash-format token (`project:environment.secret`) names its environment and sees its project’s flags only.',
  }),
  frontendTokens: option(Type.Array(Type.String({ minLength: 1 })), {
    env: ['FRONTEND_TOKENS'],
    default: [],
    secret: true,
    fromEnv: splitList,
    doc: 'Offline mode: comma-separated tokens frontend SDKs may evaluate with (`/api/frontend`, `/proxy`); Unleash-format ones name their environment and projects, others see every flag.',
  }),
  reloadInterval: option(Type.Integer({ minimum: 0 }), {
    env: ['RELOAD_INTERVAL'],
    default: 0,
    doc: 'Offline mode: seconds between reads of the file (a file that does not read as flags is logged and the last one kept); 0: read once, at start.',
  }),
});

export const offlineConfig = configSchema(offlineSchema);
