import { group, type Loaded, option, Type } from '@flags/config';

const list = () => Type.Array(Type.String());

/**
 * The CORS options (`cors.*`) of flags-proxy and of flags-server's frontend API, which answer
 * browsers the same way.
 */
export const corsOptions = group({
  allowedHeaders: option(list(), {
    env: ['CORS_ALLOWED_HEADERS'],
    doc: 'Allowed request headers; unset reflects `Access-Control-Request-Headers`.',
  }),
  credentials: option(Type.Boolean(), {
    env: ['CORS_CREDENTIALS'],
    default: false,
    doc: 'Sends `Access-Control-Allow-Credentials: true`.',
  }),
  exposedHeaders: option(list(), {
    env: ['CORS_EXPOSED_HEADERS'],
    default: ['ETag'],
    doc: 'Response headers exposed to browsers.',
  }),
  maxAge: option(Type.Integer({ minimum: 0 }), {
    env: ['CORS_MAX_AGE'],
    default: 172800,
    doc: 'Seconds browsers may cache a preflight result.',
  }),
  methods: option(list(), {
    env: ['CORS_METHODS'],
    default: ['GET', 'POST'],
    doc: 'Allowed methods.',
  }),
  optionsSuccessStatus: option(Type.Integer({ minimum: 200, maximum: 299 }), {
    env: ['CORS_OPTIONS_SUCCESS_STATUS'],
    default: 204,
    doc: 'Status of a passing preflight.',
  }),
  origin: option(list(), {
    env: ['CORS_ORIGIN'],
    default: ['*'],
    doc: '`*` or comma-separated allowed origins (matching origins are echoed).',
  }),
  preflightContinue: option(Type.Boolean(), {
    env: ['CORS_PREFLIGHT_CONTINUE'],
    default: false,
    doc: 'Leaves `OPTIONS` requests to the routes instead of answering preflights.',
  }),
});

/** The CORS options as the CORS hook uses them: origins as a set, lists as header values. */
export function resolveCors(cors: Loaded<typeof corsOptions>) {
  return {
    origin: cors.origin.includes('*')
      ? ('*' as const)
      : (new Set(cors.origin) as ReadonlySet<string>),
    methods: cors.methods.join(', '),
    /** `undefined`: reflect the preflight's `Access-Control-Request-Headers`. */
    allowedHeaders: cors.allowedHeaders?.join(', '),
    exposedHeaders: cors.exposedHeaders.join(', '),
    credentials: cors.credentials,
    maxAge: cors.maxAge,
    preflightContinue: cors.preflightContinue,
    optionsSuccessStatus: cors.optionsSuccessStatus,
  };
}

export type ResolvedCors = Readonly<ReturnType<typeof resolveCors>>;
