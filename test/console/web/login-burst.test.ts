import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/core/log.js';
import { putUser } from '../../../src/console/store/accounts.js';
import { openStore } from '../../../src/console/store/open.js';
import { startWeb } from '../../../src/console/web/server.js';
import { DATABASES, openDatabase, stopDatabases } from '../store/databases.js';
import { waitFor } from '../support/wait.js';
import { WebClient } from '../support/web-client.js';
import { CHILD_DEADLINE_MS } from '../../support/deadlines.js';

after(stopDatabases);

const LIMIT = 3;
const GUESSES = 50;

function web(db: Parameters<typeof startWeb>[0]['db']) {
  return startWeb({
    db,
    log: silentLogger(),
    listen: { host: '127.0.0.1', port: 0 },
    tls: null,
    transport: 'loopback',
    behindTlsProxy: false,
    sessionHours: 1,
    login: { failures: LIMIT, windowS: 900 },
    pageSize: 50,
  });
}

for (const kind of DATABASES) {
  test(
    `${kind}: ${GUESSES} guesses at once on two instances check no more passwords than the limit`,
    { timeout: CHILD_DEADLINE_MS },
    async (t) => {
      const store = await openDatabase(t, kind);
      if (store === null) return;
      // Two console instances sharing the database, as behind a load balancer.
      const second = await openStore(store.target);
      const [a, b] = [await web(store.db), await web(second.db)];
      try {
        await putUser(store.db, 'admin1', 'admin', 'admin-password-1');
        const clients = Array.from({ length: GUESSES + 1 }, (_, i) => new WebClient((i % 2 === 0 ? a : b).url));
        const forms = await Promise.all(clients.map(async (c) => WebClient.csrfOf((await c.request('/login')).text)));
        const post = (i: number, password: string) =>
          clients[i]!.request('/login', { form: { csrf: forms[i]!, name: 'admin1', password } });
        const wrong = Array.from({ length: GUESSES }, (_, i) => post(i, `wrong-password-${i}`));
        // While the burst's passwords are being checked, the right one: the limit is already taken.
        await waitFor('the limit reserved', async () => {
          const row = await store.db
            .selectFrom('login_failures')
            .select('failures')
            .where('key', '=', 'user:admin1')
            .executeTakeFirst();
          return row !== undefined && Number(row.failures) >= LIMIT;
        });
        const right = await post(GUESSES, 'admin-password-1');
        const answers = (await Promise.all(wrong)).map((r) => r.status);
        const checked = answers.filter((s) => s === 401).length;
        assert.ok(checked > 0 && checked <= LIMIT, `passwords checked: ${answers.join(' ')}`);
        assert.equal(answers.filter((s) => s === 429).length, GUESSES - checked);
        assert.equal(right.status, 429);
        assert.equal(clients[GUESSES]!.cookies.has('qrc_session'), false, 'the right password got a session');
        assert.equal((await clients[GUESSES]!.request('/')).status, 303);
      } finally {
        await a.close();
        await b.close();
        await second.close();
        await store.remove();
      }
    },
  );
}

test(
  'sqlite: a right password gives its address reservation back; failures then still count',
  { timeout: CHILD_DEADLINE_MS },
  async (t) => {
    const store = await openDatabase(t, 'sqlite');
    if (store === null) return;
    const a = await web(store.db);
    try {
      await putUser(store.db, 'admin1', 'admin', 'admin-password-1');
      for (let i = 0; i < LIMIT + 2; i++)
        assert.equal((await new WebClient(a.url).login('admin1', 'admin-password-1')).status, 303);
      for (let i = 0; i < LIMIT; i++)
        assert.equal((await new WebClient(a.url).login('admin1', 'nope-nope')).status, 401);
      assert.equal((await new WebClient(a.url).login('admin1', 'admin-password-1')).status, 429);
    } finally {
      await a.close();
      await store.remove();
    }
  },
);
