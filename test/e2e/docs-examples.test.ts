// The examples of docs/getting-started.md, run as a reader runs them: each file of docs/examples/
// is shown on the page verbatim, and runs here with the real npm packages against the demo stack
// (flags-server with the demo flags, flags-proxy in front), its URLs and keys given as variables.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  DEMO_ADMIN_TOKEN,
  DEMO_CLIENT_KEY,
  DEMO_CLIENT_TOKEN,
  type DemoStack,
  startDemoStack,
} from '../helpers/demo-stack.js';
import { waitFor } from '../helpers/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLES = 'docs/examples/';
const page = readFileSync(`${ROOT}docs/getting-started.md`, 'utf8');
const execute = promisify(execFile);

describe('docs/getting-started.md', () => {
  for (const name of readdirSync(`${ROOT}${EXAMPLES}`)) {
    it(`shows ${EXAMPLES}${name} verbatim`, () => {
      const text = readFileSync(`${ROOT}${EXAMPLES}${name}`, 'utf8');
      const language = name.endsWith('.sh') ? 'sh' : 'js';
      assert.ok(
        page.includes(`\`\`\`${language}\n${text}\`\`\``),
        `the page shows ${name} as it is`,
      );
    });
  }

  it('gives the quick start the README gives', () => {
    assert.match(page, /npm ci && npm start/);
  });
});

describe('the getting-started examples, against the demo stack', () => {
  let stack: DemoStack;
  let env: NodeJS.ProcessEnv;
  const children: ChildProcess[] = [];

  before(async () => {
    stack = await startDemoStack({ refreshInterval: 300, metricsInterval: 60_000 });
    env = {
      ...process.env,
      PROXY_URL: stack.proxyUrl,
      SERVER_URL: stack.serverUrl,
      CLIENT_KEY: DEMO_CLIENT_KEY,
      CLIENT_TOKEN: DEMO_CLIENT_TOKEN,
      ADMIN_TOKEN: DEMO_ADMIN_TOKEN,
    };
  });

  after(async () => {
    for (const child of children) child.kill();
    await stack?.close();
  });

  /** Runs an example to its end; resolves to what it printed. */
  const run = async (name: string) => {
    const command = name.endsWith('.sh') ? 'sh' : process.execPath;
    const { stdout } = await execute(command, [`${EXAMPLES}${name}`], {
      cwd: ROOT,
      env,
      timeout: 60_000,
    });
    return stdout;
  };

  it('unleash-client (Node) reads the flags through the proxy and evaluates them', async () => {
    const output = await run('unleash-client.mjs');
    assert.match(output, /^beta-banner true$/m);
    assert.match(output, /^dark-mode (midnight|charcoal)$/m);
  });

  it('the OFREP web provider evaluates on the proxy', async () => {
    const output = await run('ofrep.mjs');
    assert.match(output, /^beta-banner true$/m);
    assert.match(output, /^dark-mode \S+$/m);
    assert.doesNotMatch(output, /^dark-mode light$/m, 'the flag’s value, not the default');
  });

  it('React renders the flags through FlagProvider, useFlag and useVariant, then exits', async () => {
    const output = await run('react.mjs');
    assert.match(output, /<li>beta-banner true<\/li>/);
    assert.match(output, /<li>dark-mode (midnight|charcoal)<\/li>/);
  });

  it('unleash-proxy-client sees the flags, then the change turn-on.sh makes arrives', async () => {
    const child = spawn(process.execPath, [`${EXAMPLES}proxy-client.mjs`], { cwd: ROOT, env });
    children.push(child);
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    await waitFor(() => output.includes('dark-mode '), 30_000, 'the example’s first answers');
    assert.match(output, /^beta-banner true$/m);
    assert.match(output, /^dark-mode (midnight|charcoal)$/m);
    assert.doesNotMatch(output, /maintenance-mode true/);

    await run('turn-on.sh');
    await waitFor(
      () => output.includes('maintenance-mode true'),
      30_000,
      'maintenance-mode to reach the browser SDK example',
    );
  });
});
