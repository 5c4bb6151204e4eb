import t from 'tap';
import { SettableClock } from '../../src/clock.js';
import { createTree, startServer, type TestServer } from '../helpers/server.js';
import { hasSocat, ptyPairFor } from '../helpers/pty.js';

/** The scale routes, and the scale over a real tty (a socat pty pair) into harvests, driven over the HTTP API. */

async function until<T>(what: string, probe: () => Promise<T | undefined | false>, ms = 15_000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const scale = async (s: TestServer) => (await s.request('GET', '/api/scales', { admin: true })).body.items[0];

if (!hasSocat()) {
  t.plan(0, 'socat is not installed (apt-get install socat): the scale tests need a real pty pair');
} else {
  t.test('weights from a scale on a serial line become harvests, one per stable weight after zero', async (t) => {
    const pty = await ptyPairFor(t);
    // 23:30 UTC on 4 March is 00:30 on 5 March in Amsterdam: the harvest day is the greenhouse's.
    const clock = new SettableClock('2026-03-04T23:30:00Z');
    const s = await startServer(t, { scalePort: pty.device, scaleReconnectMinMs: 50, scaleReconnectMaxMs: 200 }, { clock });
    const tree = await createTree(s);
    const harvests = async () => (await s.request('GET', `${tree.cyclePath}/harvests`, { key: tree.adminKey })).body.items;

    await until('the port to open', async () => (await scale(s))?.connection === 'connected');
    let sc = await scale(s);
    t.match(sc, { port: 'scale0', path: pty.device, state: 'waiting_for_zero', cycle_id: null, warning: /not assigned to a crop cycle/ });

    // Weights while unassigned are read, not stored.
    pty.send('ST,GS,+0000.00kg\r\nST,GS,+0004.00kg\r\n');
    await until('the unassigned weight', async () => (await scale(s)).weights_not_recorded === 1);
    t.same(await harvests(), []);

    const put = await s.request('PUT', '/api/scales/scale0', { admin: true, body: { cycle_id: tree.cycleId } });
    t.equal(put.status, 200);
    t.match(put.body, { port: 'scale0', cycle_id: tree.cycleId, assigned_by: 'api', warning: null });

    // Noise, a line in pieces, unstable readings, then the stable weight: one harvest.
    pty.send('ST,GS,+0000.00kg\r\n');
    pty.send(Buffer.from([0xff, 0x00, 0x13, 0x0d, 0x0a]));
    pty.send('garbage line\r\n' + 'x'.repeat(500) + '\r\n');
    pty.send('US,GS,+0003.20kg\r\nUS,GS,+0012.');
    pty.send('90kg\r\nUS,GS,+0012.36kg\r\nST,GS,+00');
    pty.send('12.34kg\r\n');
    pty.send('ST,GS,+0012.34kg\r\nST,GS,+0012.34kg\r\nUS,GS,+0015.00kg\r\nST,GS,+0015.00kg\r\n');
    t.match(
      await until('the first harvest', async () => {
        const h = await harvests();
        return h.length >= 1 && h;
      }),
      [{ kg: 12.34 }],
    );
    // Pounds, then grams, then Mettler SICS, each after the crate came off.
    pty.send('US,GS,+0001.00kg\r\nST,GS,+0000.01kg\r\nUS,GS,+0010.00lb\r\nST,GS,+0022.00lb\r\n');
    pty.send('ST,GS,+0000.00kg\r\nST,GS,+8500g\r\n');
    pty.send('S D      0.00 kg\r\nS S      0.00 kg\r\nS D      6.10 kg\r\nS S      6.25 kg\r\nS S      6.25 kg\r\n');
    let items = await until('four harvests', async () => {
      const h = await harvests();
      return h.length >= 4 && h;
    });
    t.same(
      items.map((h: { kg: number }) => h.kg),
      [12.34, 9.979, 8.5, 6.25],
      'one harvest per stable weight after zero, in kg',
    );
    t.match(items[0], { harvested_on: '2026-03-05', week: '2026-W10', note: 'Weighed on scale scale0' });
    const logged = await s.app.services.db
      .selectFrom('change_log')
      .select(['entity', 'op', 'actor'])
      .where('entity', '=', 'harvests')
      .execute();
    t.same(
      logged.map((l) => l.actor),
      ['scale:scale0', 'scale:scale0', 'scale:scale0', 'scale:scale0'],
      'each in the change log, made by the scale',
    );
    sc = await scale(s);
    t.match(sc, {
      state: 'recorded',
      harvests_recorded: 4,
      weights_not_recorded: 1,
      last_reading: { kg: 6.25, stable: true, format: 'sics' },
      last_harvest: { kg: 6.25, cycle_id: tree.cycleId },
    });

    // The cable comes out in the middle of a line.
    pty.send('S S      0.00 kg\r\nST,GS,+0007.');
    await until('zero before the pull', async () => (await scale(s)).state === 'ready');
    await pty.pull();
    sc = await until('the disconnect', async () => {
      const x = await scale(s);
      return x.connection === 'disconnected' && x;
    });
    t.match(sc, { warning: /not connected .*Check its USB cable/, next_try_at: String });
    const health = await s.request('GET', '/api/health');
    t.equal(health.status, 200, 'a scale away never makes the service unavailable');
    t.match(health.body.checks.scales, { ok: false, warning: /scale on .*scale0 is not connected/ });

    // Back in: the half line before the pull is not joined to the first bytes after it.
    await pty.plug();
    await until('the reconnect', async () => (await scale(s)).connection === 'connected');
    pty.send('50kg\r\nST,GS,+0003.00kg\r\n');
    items = await until('the harvest after the reconnect', async () => {
      const h = await harvests();
      return h.length >= 5 && h;
    });
    t.same(
      items.map((h: { kg: number }) => h.kg),
      [12.34, 9.979, 8.5, 6.25, 3],
      'no 7.50 from the torn line, no 50 kg',
    );
    t.match((await s.request('GET', '/api/health')).body.checks.scales, { ok: true, warning: null });
  });

  t.test('assigning a scale: bad requests change nothing', async (t) => {
    const pty = await ptyPairFor(t);
    const s = await startServer(t, { scalePort: pty.device, scaleCycleId: undefined });
    const tree = await createTree(s);
    const ok = await s.request('PUT', '/api/scales/scale0', { admin: true, body: { cycle_id: tree.cycleId } });
    t.equal(ok.status, 200);

    const cases: [string, string, unknown, number, string][] = [
      ['an unknown port', '/api/scales/ttyUSB9', { cycle_id: tree.cycleId }, 404, 'not_found'],
      [
        'a crop cycle that does not exist',
        '/api/scales/scale0',
        { cycle_id: '0190a8b4-0000-7000-8000-000000000000' },
        422,
        'validation_failed',
      ],
      ['an id that is not one', '/api/scales/scale0', { cycle_id: 'cycle-1' }, 422, 'validation_failed'],
      ['no cycle_id', '/api/scales/scale0', {}, 422, 'validation_failed'],
      ['an extra field', '/api/scales/scale0', { cycle_id: tree.cycleId, kg: 3 }, 422, 'validation_failed'],
      ['a port name with a slash', '/api/scales/..%2Fetc', { cycle_id: tree.cycleId }, 422, 'validation_failed'],
    ];
    for (const [what, url, body, status, code] of cases) {
      const r = await s.request('PUT', url, { admin: true, body });
      t.equal(r.status, status, what);
      t.equal(r.body.code, code, what);
      t.match(r.headers.get('content-type'), /application\/problem\+json/);
    }
    const noToken = await s.request('PUT', '/api/scales/scale0', { body: { cycle_id: null } });
    t.equal(noToken.status, 401);
    const withKey = await s.request('PUT', '/api/scales/scale0', { key: tree.adminKey, body: { cycle_id: null } });
    t.equal(withKey.status, 401, "an organization's key is not the appliance admin token");
    t.match(await scale(s), { cycle_id: tree.cycleId, assigned_by: 'api' }, 'the assignment is unchanged');

    const off = await s.request('PUT', '/api/scales/scale0', { admin: true, body: { cycle_id: null } });
    t.match(off.body, { cycle_id: null, assigned_by: null });

    // A crop cycle removed leaves the scale unassigned, never pointing at nothing.
    await s.request('PUT', '/api/scales/scale0', { admin: true, body: { cycle_id: tree.cycleId } });
    const del = await s.request('DELETE', `${tree.cyclePath}?cascade=true`, { key: tree.adminKey });
    t.equal(del.status, 200, del.text);
    t.match(await scale(s), { cycle_id: null });
  });

  t.test('bad scale settings stop the start with a message', async (t) => {
    await t.rejects(startServer(t, { scalePort: '/dev/null', scaleFraming: '9X1' }), /SCALE_FRAMING must be/);
    await t.rejects(startServer(t, { scalePort: '/dev/a/ttyS0,/dev/b/ttyS0' }), /two ports called ttyS0/);
  });

  t.test('a port that is not there is retried, and reported', async (t) => {
    const pty = await ptyPairFor(t, false);
    const s = await startServer(t, { scalePort: pty.device, scaleReconnectMinMs: 20, scaleReconnectMaxMs: 80 });
    const sc = await until('a failed open', async () => {
      const x = await scale(s);
      return x.connection === 'disconnected' && x;
    });
    t.match(sc, { disconnected_since: null, warning: /since the service started .*No such file|since the service started/ });
    await pty.plug();
    t.teardown(() => pty.pull());
    const back = await until('the port once it appears', async () => {
      const x = await scale(s);
      return x.connection === 'connected' && x;
    });
    t.match(back, { connection: 'connected', last_error: null, warning: /not assigned/ }, 'connected once the device appeared');
  });
}
