import t from 'tap';
import { fastId } from '../../../src/climate/imports/ids.js';
import { newId, UUID_PATTERN } from '../../../src/db/ids.js';

t.test('import reading ids are UUIDv7: unique, in creation order, beside db/ids.ts ones', async (t) => {
  const ids = Array.from({ length: 50_000 }, () => fastId());
  const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  t.ok(ids.every((id) => v7.test(id) && new RegExp(UUID_PATTERN).test(id)), 'version 7, RFC 9562 variant');
  t.equal(new Set(ids).size, ids.length, 'unique');
  t.ok(ids.every((id, i) => i === 0 || ids[i - 1]! < id), 'each sorts after the one before');
  const ms = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
  const before = Date.now();
  const id = fastId();
  t.ok(Math.abs(ms(id) - before) < 5_000, 'carries the time');
  t.ok(Math.abs(ms(newId()) - ms(id)) < 5_000, 'the same clock as newId()');
});
