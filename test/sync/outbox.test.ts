// A box's outbox read in pages (src/sync/outbox.ts): a page stops at its count or its bytes,
// whichever comes first; a change larger than the byte cap goes alone rather than never; read page
// after page, the changes are the box's own, each once, in change-log order.
import t from 'tap';
import { DEFAULT_LIMITS, readOutbox, type ReadLimits } from '../../src/sync/outbox.js';
import { kindsOf, nodeOf } from '../../src/sync/registry.js';
import type { WireChange } from '../../src/sync/wire.js';
import { createTree, startServer } from '../helpers/server.js';

t.test('the outbox in pages: by count, by bytes, and a change larger than the cap alone', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  // Notes of the most a harvest takes, so that each change is about a kilobyte.
  for (let i = 0; i < 40; i++) {
    const res = await s.request('POST', `${tree.cyclePath}/harvests`, {
      key: tree.adminKey,
      body: { week: '2026-W10', kg: 1 + i, note: `${i} `.padEnd(500, 'x') },
    });
    t.equal(res.status, 201);
  }
  const services = s.app.services;
  const read = async (limits: ReadLimits) => {
    const pages: { changes: WireChange[]; bytes: number }[] = [];
    for (let after = 0; ;) {
      const page = await readOutbox(services, kindsOf(services), nodeOf(services), tree.orgId, after, limits);
      if (page.scanned === 0) break;
      pages.push({ changes: page.changes, bytes: page.bytes });
      after = page.last;
      if (!page.more) break;
    }
    return pages;
  };
  const all = await read({ maxChanges: 10_000, maxBytes: 64 * 1024 * 1024 });
  t.equal(all.length, 1, 'with room for everything: one page');
  const everything = all[0]!.changes;
  const harvests = everything.filter((c) => c.kind === 'harvests');
  t.equal(harvests.length, 40, "every harvest is in the box's outbox");
  const size = (c: WireChange) => JSON.stringify(c).length + 1;
  const ids = (pages: { changes: WireChange[] }[]) => pages.flatMap((p) => p.changes.map((c) => c.id));

  const byCount = await read({ maxChanges: 7, maxBytes: DEFAULT_LIMITS.maxBytes });
  t.ok(
    byCount.every((p) => p.changes.length <= 7),
    'no page holds more changes than its count',
  );
  t.same(ids(byCount), ids(all), 'page after page: every change once, in order');

  const cap = 5 * size(harvests[0]!);
  const byBytes = await read({ maxChanges: 500, maxBytes: cap });
  t.ok(byBytes.length > 1, 'the bytes cut the pages before the count does');
  t.ok(
    byBytes.every((p) => p.bytes <= cap && p.bytes === p.changes.reduce((n, c) => n + size(c), 0)),
    'no page holds more bytes than its cap, and each counts the bytes it holds',
  );
  t.ok(
    byBytes.slice(0, -1).every((p, i) => p.bytes + size(byBytes[i + 1]!.changes[0]!) > cap),
    'a page ends only where the next change would not fit',
  );
  t.same(ids(byBytes), ids(all), 'every change once, in order');

  const tiny = await read({ maxChanges: 500, maxBytes: 100 });
  t.ok(
    tiny.every((p) => p.changes.length === 1),
    'a change larger than the cap goes alone in its page',
  );
  t.same(ids(tiny), ids(all), 'and none is left behind');
});
