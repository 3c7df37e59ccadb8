import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { atProcessEnd } from '../../src/sim/process-end.js';
import { WebClient } from '../console/support/web-client.js';
import { waitFor } from '../console/support/wait.js';
import { TEST_DEADLINE_MS } from '../support/deadlines.js';

const MAIN_JS = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

const T = { timeout: TEST_DEADLINE_MS };

test(
  'qrvend demo --console: a URL and a login, a sale on the sales page, stock and a pick list, Ctrl-C ends it',
  T,
  async () => {
    const child = spawn(process.execPath, [MAIN_JS, 'demo', '--console', '--listen', '127.0.0.1:0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const forget = atProcessEnd(() => child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const [, url, account, password] = await waitFor(
        'the URL and the login',
        () => /: (http:\/\/127\.0\.0\.1:\d+) +\(account (\S+), password ([^\s)]+)\)/.exec(out) ?? undefined,
        60_000,
      );
      const web = new WebClient(url!);
      const login = await web.login(account!, password!);
      assert.equal(login.status, 303, `logged in (${login.status})`);
      const sales = await waitFor(
        'a sale on the sales page',
        async () => {
          const page = await web.request('/sales');
          assert.equal(page.status, 200);
          return /id="sales-machines"[\s\S]*demo-\d\d[\s\S]*EUR/.test(page.text) ? page.text : undefined;
        },
        60_000,
      );
      assert.match(sales, /demo-\d\d/);
      const overview = await web.request('/');
      assert.match(overview.text, /data-machine="demo-01"/);
      // The planogram, the stock going down from par as the machines sell, the route's pick list.
      assert.match((await web.request('/planograms')).text, /data-template="SNACK-6"/);
      const stock = await web.request('/stock');
      assert.match(stock.text, /data-machine="demo-12"/);
      await waitFor(
        'something to bring on the pick list',
        async () => /data-product="[A-Z]+"/.test((await web.request('/routes/Demo%20route/pick')).text) || undefined,
        60_000,
      );
      child.kill('SIGINT');
      assert.equal(await exited, 0, `the demo ended cleanly: ${err}`);
      assert.match(out, /stopped after \d+ sales; its database is removed/);
      const database = /selling into (\S+\.sqlite);/.exec(out)?.[1];
      assert.ok(database !== undefined && !existsSync(database), `its database ${database} is removed`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      forget();
    }
  },
);
