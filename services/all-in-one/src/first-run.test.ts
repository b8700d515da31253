import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { lstat, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCookieJar, unusedLocalPort, waitFor, type CookieJar } from '@gateway/testkit';

// The README's first command (`npx -y pnpm@10.34.9 start`) as a newcomer runs it: the gateway, the
// development identity service and the demo platform start together, the demo platform is
// registered through the admin API, and a browser (fetch + a cookie jar) signs in on the
// demo platform and lands on its signed-in page. Restarts keep the data and the key.

let dataDir: string;
let port: number;
let demoPort: number;
let gateway: string;
let demo: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'gateway-first-run-'));
  port = await unusedLocalPort();
  demoPort = await unusedLocalPort();
  gateway = `http://localhost:${port}`;
  demo = `http://localhost:${demoPort}`;
});

afterAll(async () => {
  for (const run of started) await run.stop('SIGTERM').catch(() => undefined);
  for (const child of terminals) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  await rm(dataDir, { recursive: true, force: true });
});

type Run = {
  child: ChildProcess;
  output: () => string;
  /** The exit code. */
  exited: Promise<number | null>;
  stop(signal: NodeJS.Signals): Promise<number | null>;
};
const started: Run[] = [];

function startFirstRun(env: Record<string, string> = {}): Run {
  let output = '';
  const child = spawn(
    process.execPath,
    ['--conditions=@gateway/source', '--import', 'tsx', 'services/all-in-one/src/main.ts'],
    {
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        DEMO_PLATFORM_PORT: String(demoPort),
        GATEWAY_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const run: Run = {
    child,
    output: () => output,
    exited,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  started.push(run);
  return run;
}

async function untilReady(run: Run): Promise<void> {
  const ready = () => run.output().includes('Ctrl-C stops everything');
  await waitFor(async () => ready() || run.child.exitCode !== null, {
    timeoutMs: 90_000,
    intervalMs: 200,
    what: 'the first-run banner',
  }).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${run.output()}`);
  });
  if (!ready()) throw new Error(`the first run exited before its banner:\n${run.output()}`);
}

type Terminal = {
  untilReady(): Promise<void>;
  /** Ctrl-C, then the exit status of the terminal's command and all it printed. */
  interrupt(): Promise<{ code: number | null; output: string }>;
};
const terminals: ChildProcess[] = [];

// Ctrl-C at a terminal reaches every process of its foreground group: npm (npx), pnpm,
// their `sh -c` wrappers, tsx and the gateway. `script` gives the command a terminal of its
// own (a pseudo-terminal) and passes on what is written to its stdin, Ctrl-C included; it is
// util-linux's, part of every Debian and Ubuntu system. The command's exit status is printed
// after it as `EXIT=<status>`.
function startInTerminal(command: string): Terminal {
  let output = '';
  const child = spawn('script', ['-qfec', `${command}; echo "EXIT=$?"`, '/dev/null'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'dumb' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  terminals.push(child);
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const ready = () => output.includes('Ctrl-C stops everything');
  return {
    async untilReady() {
      await waitFor(async () => ready() || child.exitCode !== null, {
        timeoutMs: 150_000,
        intervalMs: 200,
        what: 'the first-run banner in the terminal',
      }).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${output}`);
      });
      if (!ready()) throw new Error(`the first run exited before its banner:\n${output}`);
    },
    async interrupt() {
      child.stdin?.write('\x03');
      return { code: await exited, output };
    },
  };
}

async function visit(
  jar: CookieJar,
  url: string,
  options: { form?: Record<string, string>; origin?: string } = {},
): Promise<Response> {
  const cookie = jar.headerFor(url);
  const response = await fetch(url, {
    method: options.form === undefined && options.origin === undefined ? 'GET' : 'POST',
    redirect: 'manual',
    headers: {
      ...(cookie === undefined ? {} : { cookie }),
      ...(options.origin === undefined ? {} : { origin: options.origin }),
      ...(options.form === undefined
        ? {}
        : { 'content-type': 'application/x-www-form-urlencoded' }),
    },
    ...(options.form === undefined ? {} : { body: new URLSearchParams(options.form) }),
  });
  jar.store(url, response);
  return response;
}

const isRedirect = (response: Response) =>
  response.status >= 300 && response.status < 400 && response.headers.has('location');

function formOf(page: string, url: string, actionPattern: RegExp) {
  const action = new RegExp(`<form[^>]*\\saction="(${actionPattern.source})"`).exec(page)?.[1];
  if (action === undefined) throw new Error(`no matching form at ${url}:\n${page}`);
  const hidden = Object.fromEntries(
    [...page.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]*)"[^>]*value="([^"]*)"/g)].map(
      (m) => [m[1], m[2]],
    ),
  );
  return { url: new URL(unescapeHtml(action), url).href, hidden };
}

/** The rows of the sessions table on the demo's /me. */
const sessionRows = (page: string) =>
  /<tbody>([\s\S]*?)<\/tbody>/.exec(page)?.[1]?.match(/<tr[\s\S]*?<\/tr>/g) ?? [];

const unescapeHtml = (text: string) =>
  text
    .replace(/&amp;/g, '&')
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)));

/**
 * A browser from `url` on: follows redirects across the demo platform, the gateway and the
 * identity service, fills the one page `fill` recognises, and stops on the first page the
 * demo platform answers with content.
 */
async function browse(
  jar: CookieJar,
  first: Response,
  url: string,
  fill: (page: string, url: string) => { url: string; form: Record<string, string> },
): Promise<{ url: string; status: number; page: string }> {
  let response = first;
  let filled = false;
  for (let hop = 0; hop < 25; hop += 1) {
    if (isRedirect(response)) {
      url = new URL(response.headers.get('location') ?? '', url).href;
      response = await visit(jar, url);
      continue;
    }
    const page = await response.text();
    if (new URL(url).origin === demo) return { url, status: response.status, page };
    if (filled) throw new Error(`stuck at ${url} (${response.status}):\n${page}`);
    const next = fill(page, url);
    url = next.url;
    response = await visit(jar, url, { form: next.form });
    filled = true;
  }
  throw new Error(`too many redirects, last at ${url}`);
}

async function signIn(jar: CookieJar, email: string, password: string) {
  const home = await (await visit(jar, `${demo}/`)).text();
  const href = /<a class="button primary" href="([^"]*)">Sign in<\/a>/.exec(home)?.[1];
  expect(href).toBeDefined();
  const url = new URL(unescapeHtml(href ?? ''), demo).href;
  return browse(jar, await visit(jar, url), url, (page, at) => {
    const form = formOf(page, at, /[^"]*login[^"]*/);
    return { url: form.url, form: { ...form.hidden, email, password } };
  });
}

async function adminToken(): Promise<string> {
  const secrets = JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as Record<
    string,
    string
  >;
  const response = await fetch(`${gateway}/api/auth/env/PROD/oauth2/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`gateway-admin:${secrets.DEV_IDENTITY_ADMIN_CLIENT_SECRET}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      scope: 'platforms:admin',
      resource: 'http://localhost:8080',
    }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

async function demoPlatforms(): Promise<{ platformKey: string; credentials: { id: string }[] }[]> {
  const response = await fetch(`${gateway}/v1/platforms`, {
    headers: { authorization: `Bearer ${await adminToken()}` },
  });
  expect(response.status).toBe(200);
  const { items } = (await response.json()) as {
    items: { platformKey: string; credentials: { id: string }[] }[];
  };
  return items.filter((platform) => platform.platformKey === 'DEMO');
}

const readKeyFile = async () =>
  JSON.parse(await readFile(join(dataDir, 'demo-platform.json'), 'utf8')) as {
    clientId: string;
    clientSecret: string;
    credentialId: string;
  };

/** Every entry of the data folder whose mode lets the group or others in. */
async function openToOthers(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of ['.', ...(await readdir(folder, { recursive: true }))]) {
    const stats = await lstat(join(folder, entry));
    if (!stats.isSymbolicLink() && (stats.mode & 0o077) !== 0) {
      found.push(`${entry} ${(stats.mode & 0o777).toString(8)}`);
    }
  }
  return found;
}

const readLock = async () => readFile(join(dataDir, 'gateway.lock'), 'utf8');

describe('start (the first run)', () => {
  let firstKey: { clientId: string; clientSecret: string; credentialId: string };

  it('starts the gateway, the identity service and the demo platform and names them, with the demo accounts', async () => {
    const run = startFirstRun();
    await untilReady(run);
    const output = run.output();
    expect(output).toContain(`Demo platform      ${demo}`);
    expect(output).toContain(`${gateway}/docs`);
    expect(output).toContain(`${gateway}/api/auth/env/PROD`);
    for (const account of ['alice@example.com', 'alice-password', 'admin@example.com']) {
      expect(output).toContain(account);
    }
    expect(output).toMatch(/admin@example\.com +admin-password +platform_admin/);
    expect(output).toContain('gateway-admin');
    expect(output).not.toMatch(/clientSecret|DEV_IDENTITY_ADMIN_CLIENT_SECRET"?:/);

    // What it was doing, said while it did it, before the banner.
    const banner = output.indexOf('Ready. Open the demo platform');
    for (const step of [
      `creating the embedded database in ${dataDir}`,
      'migrating the database…',
      'starting the identity service…',
      'registering the demo platform…',
      `starting the demo platform on port ${demoPort}…`,
    ]) {
      expect({ step, before: output.indexOf(step) < banner && output.includes(step) }).toEqual({
        step,
        before: true,
      });
    }
    // Commands a fresh machine can run, and nothing outside the repository to look up.
    expect(output).toContain('npx -y pnpm@10.34.9 start');
    expect(output.replace(/npx -y pnpm@10\.34\.9 /g, '')).not.toMatch(/\bpnpm\b/);
    expect(output).not.toMatch(/\bspec\b|section \d/i);

    // The demo platform was registered through the admin API, its key kept in 0600.
    expect(await demoPlatforms()).toHaveLength(1);
    expect((await stat(join(dataDir, 'demo-platform.json'))).mode & 0o777).toBe(0o600);
    firstKey = await readKeyFile();
    expect(output).not.toContain(firstKey.clientSecret);

    // The folder and everything the gateway created in it are the owner's alone.
    expect(await openToOthers(dataDir)).toEqual([]);
  });

  it('refuses a second copy on the same data folder at once, naming the folder and the pid, and touches nothing', async () => {
    const first = started[0];
    const lock = await readLock();
    const secrets = await readFile(join(dataDir, 'secrets.json'), 'utf8');
    const postmaster = join(dataDir, 'postmaster.pid');
    const postmasterBefore = existsSync(postmaster) ? (await stat(postmaster)).mtimeMs : undefined;
    // The same command again: the same folder and the same (taken) ports.
    const second = startFirstRun();
    expect(await second.exited).toBe(1);
    expect(second.output()).toContain(
      `The data folder ${dataDir} is in use by another gateway process (pid ${first?.child.pid}).`,
    );
    expect(second.output()).not.toContain('embedded database');
    expect(second.output()).not.toContain('cannot listen');
    expect(await readLock()).toBe(lock);
    expect(await readFile(join(dataDir, 'secrets.json'), 'utf8')).toBe(secrets);
    const postmasterAfter = existsSync(postmaster) ? (await stat(postmaster)).mtimeMs : undefined;
    expect(postmasterAfter).toBe(postmasterBefore);
  });

  it('refuses a second copy on the same PORT with a message naming PORT', async () => {
    const second = startFirstRun({ GATEWAY_DATA_DIR: join(dataDir, 'second-copy') });
    expect(await second.exited).toBe(1);
    expect(second.output()).toBe(
      `The gateway cannot listen on port ${port} (already in use). ` +
        'Stop what uses it or choose another port with PORT.\n',
    );
    expect(existsSync(join(dataDir, 'second-copy'))).toBe(false);
  });

  it('signs alice in on the demo platform and shows the exchange on its signed-in page', async () => {
    const jar = createCookieJar();
    const landed = await signIn(jar, 'alice@example.com', 'alice-password');
    expect(landed.url).toBe(`${demo}/me`);
    expect(landed.status).toBe(200);
    expect(landed.page).toContain('alice@example.com');
    expect(landed.page).toContain(`${gateway}/api/auth/env/PROD`);
    expect(landed.page).toMatch(/<dt>key<\/dt>\s*<dd>PROD<\/dd>/);
    expect(landed.page).toMatch(/<dt>platform<\/dt>\s*<dd>DEMO<\/dd>/);
    expect(landed.page).toContain('COMPLETE');
    expect(landed.page).toContain('Sign out');

    // Sign out: the SDK logs out at the gateway and sends the browser through the identity
    // service's sign-out confirmation back to the demo platform's home page.
    const out = await browse(
      jar,
      await visit(jar, `${demo}/auth/logout`, { origin: demo, form: {} }),
      `${demo}/auth/logout`,
      (page, at) => {
        const form = formOf(page, at, /[^"]*/);
        return { url: form.url, form: { ...form.hidden, logout: 'yes' } };
      },
    );
    expect(out.url).toBe(`${demo}/`);
    const me = await visit(jar, `${demo}/me`);
    expect(me.status).toBe(302);
    expect(me.headers.get('location')).toContain('/auth/login');
  });

  it('lists both of alice\'s sessions on /me, this one marked, and "Sign out everywhere else" ends the other', async () => {
    const elsewhere = createCookieJar();
    const here = createCookieJar();
    expect((await signIn(elsewhere, 'alice@example.com', 'alice-password')).status).toBe(200);
    const landed = await signIn(here, 'alice@example.com', 'alice-password');
    expect(landed.url).toBe(`${demo}/me`);
    const rows = sessionRows(landed.page);
    // The previous test signed its session out: these two are all of alice's.
    expect(rows).toHaveLength(2);
    expect(rows.filter((row) => row.includes('this session'))).toHaveLength(1);
    for (const row of rows) expect(row).toMatch(/<td>Demo platform<\/td>\s*<td>PROD \(/);

    const ended = await visit(here, `${demo}/me/sign-out-others`, { origin: demo, form: {} });
    expect(ended.status).toBe(303);
    expect(ended.headers.get('location')).toBe('/me?ended=1');
    const after = await (await visit(here, `${demo}/me?ended=1`)).text();
    expect(after).toContain('Signed out of 1 other session.');
    expect(sessionRows(after)).toHaveLength(1);
    // The other browser's next page: its session ended, the platform sends it to sign in.
    const next = await visit(elsewhere, `${demo}/me`);
    expect(next.status).toBe(302);
    expect(next.headers.get('location')).toBe('/auth/login?returnTo=%2Fme');
  });

  it('offers sign-up: "Create an account" starts the login with defaultScreen=up', async () => {
    const jar = createCookieJar();
    const home = await (await visit(jar, `${demo}/`)).text();
    const href = /<a class="button" href="([^"]*)">Create an account<\/a>/.exec(home)?.[1];
    const login = await visit(jar, new URL(unescapeHtml(href ?? ''), demo).href);
    const start = new URL(login.headers.get('location') ?? '');
    expect(`${start.origin}${start.pathname}`).toBe(`${gateway}/v1/auth/start`);
    expect(start.searchParams.get('platformKey')).toBe('DEMO');
    expect(start.searchParams.get('defaultScreen')).toBe('up');
    const authorize = await visit(jar, start.href);
    expect(new URL(authorize.headers.get('location') ?? '').searchParams.get('screen_hint')).toBe(
      'signup',
    );
  });

  it('makes admin@example.com a platform_admin whose demo-platform session carries its permissions, and the printed token command opens the admin API', async () => {
    const landed = await signIn(createCookieJar(), 'admin@example.com', 'admin-password');
    expect(landed.url).toBe(`${demo}/me`);
    // Spec 2.6, 4.4: the exchange answers the session's snapshot (ADMIN_POWER_CONSOLE_ONLY off).
    expect(landed.page).toContain('platforms:admin');

    // What the banner tells an admin to run, followed as curl would.
    const command =
      /curl -s -u "gateway-admin:\$\(node -p "require\('([^']+)'\)\.(\w+)"\)" .*-d "scope=([^"]+)" -d resource=(\S+) (\S+)/.exec(
        started[0]?.output() ?? '',
      );
    expect(command).not.toBeNull();
    const [, secretsFile = '', secretName = '', scope = '', resource = '', tokenUrl = ''] =
      command ?? [];
    const secrets = JSON.parse(await readFile(secretsFile, 'utf8')) as Record<string, string>;
    const token = await fetch(tokenUrl, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`gateway-admin:${secrets[secretName]}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource }),
    });
    expect(token.status).toBe(200);
    const { access_token: accessToken } = (await token.json()) as { access_token: string };
    const platforms = await fetch(`${gateway}/v1/platforms`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    expect(platforms.status).toBe(200);
    const users = await fetch(`${gateway}/v1/admin/users?search=admin%40example.com`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    const { items } = (await users.json()) as { items: { email: string; roles: string[] }[] };
    expect(items.map(({ email, roles }) => ({ email, roles }))).toEqual([
      { email: 'admin@example.com', roles: ['platform_admin'] },
    ]);
  });

  it('stops on SIGTERM with exit code 0 and releases the data folder', async () => {
    expect(await started[0]?.stop('SIGTERM')).toBe(0);
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false);
  });

  it('keeps the data on a second start: the same platform and the same key', async () => {
    // A lock left by a process that is gone (killed outright) is taken over.
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    await writeFile(
      join(dataDir, 'gateway.lock'),
      JSON.stringify({ pid: gone, hostname: hostname() }),
    );
    const secrets = await readFile(join(dataDir, 'secrets.json'), 'utf8');
    const run = startFirstRun();
    await untilReady(run);
    expect(await demoPlatforms()).toHaveLength(1);
    expect(await readKeyFile()).toEqual(firstKey);
    // The same encryption keys and signing secrets: sessions and sealed data stay readable.
    expect(await readFile(join(dataDir, 'secrets.json'), 'utf8')).toBe(secrets);
    const landed = await signIn(createCookieJar(), 'alice@example.com', 'alice-password');
    expect(landed.url).toBe(`${demo}/me`);
    expect(landed.status).toBe(200);
    expect(await run.stop('SIGINT')).toBe(0);
  });

  it('stops with a message naming DEMO_PLATFORM_PORT when the port is taken', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(demoPort, resolve));
    try {
      const run = startFirstRun();
      expect(await run.exited).toBe(1);
      expect(run.output()).toBe(
        `The demo platform cannot listen on port ${demoPort} (already in use). ` +
          'Stop what uses it or choose another port with DEMO_PLATFORM_PORT.\n',
      );
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  // The README's first command as a newcomer types it, in a terminal: the restart after the
  // key file was lost, then Ctrl-C.
  let terminal: Terminal | undefined;

  it('issues a new key through the admin API when the key file is lost', async () => {
    await rm(join(dataDir, 'demo-platform.json'));
    terminal = startInTerminal(
      `GATEWAY_DATA_DIR='${dataDir}' PORT=${port} DEMO_PLATFORM_PORT=${demoPort} ` +
        'npx -y pnpm@10.34.9 start',
    );
    await terminal.untilReady();
    const [platform] = await demoPlatforms();
    expect(platform?.credentials.map((credential) => credential.id)).toEqual([
      firstKey.credentialId,
    ]);
    const rotated = await readKeyFile();
    expect(rotated.clientSecret).not.toBe(firstKey.clientSecret);
    const landed = await signIn(createCookieJar(), 'alice@example.com', 'alice-password');
    expect(landed.url).toBe(`${demo}/me`);
  });

  it('ends `npx -y pnpm@10.34.9 start` on Ctrl-C with exit status 0 and no ELIFECYCLE', async () => {
    if (terminal === undefined) throw new Error('the terminal run did not start');
    const { code, output } = await terminal.interrupt();
    expect(code).toBe(0);
    expect(output).toContain('shutting down…');
    expect(output).toMatch(/EXIT=0\r?\n/);
    expect(output).not.toContain('ELIFECYCLE');
    expect(existsSync(join(dataDir, 'gateway.lock'))).toBe(false);
  });
});
