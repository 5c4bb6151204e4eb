// The pool as the service's reads see it (src/db/postgres.ts, readerPool): no connection to be had is a
// 503 that says the database cannot be reached. Needs no PostgreSQL server: the one asked for is not there.
import net from 'node:net';
import t from 'tap';
import { createPool, readerPool } from '../../src/db/postgres.js';
import { Unavailable } from '../../src/errors.js';
import { problemOf } from '../../src/http/problem.js';

t.test('a server that refuses the connection: Unavailable database_unavailable, a 503', async (t) => {
  // A port that was free a moment ago: nothing listens on it.
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const pool = createPool(`postgres://cropwalk@127.0.0.1:${port}/cropwalk`);
  t.teardown(() => pool.end());
  const err = await readerPool(pool)
    .connect()
    .then(
      () => null,
      (e: unknown) => e,
    );
  t.ok(err instanceof Unavailable, String(err));
  t.equal((err as Unavailable).code, 'database_unavailable');
  t.match((err as Error).message, /ECONNREFUSED/, 'the reason is said');
  t.equal(problemOf(err)?.status, 503);
});
