import t from 'tap';
import { pointId, pointInstant } from '../../../src/climate/readings/point-id.js';

const CYCLE = '0192f1a0-0000-7000-8000-000000000001';
const OTHER = '0192f1a0-0000-7000-8000-000000000002';
const AT = Date.UTC(2026, 2, 1, 11);

t.test('a point id is a UUIDv7 carrying the instant', async (t) => {
  const id = pointId(CYCLE, 'air_temperature', AT);
  t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  t.equal(pointInstant(id), AT);
  t.equal(pointInstant(id.toUpperCase()), AT, 'read in either case');
  t.equal(pointInstant(pointId(CYCLE, 'co2', 0)), 0, 'the epoch');
  t.equal(pointInstant(pointId(CYCLE, 'co2', Date.UTC(2199, 11, 31, 23))), Date.UTC(2199, 11, 31, 23), 'the last instant stored');
});

t.test('the same reading has the same id; another cycle, metric or instant another id', async (t) => {
  const id = pointId(CYCLE, 'air_temperature', AT);
  t.equal(pointId(CYCLE, 'air_temperature', AT), id);
  const others = [pointId(OTHER, 'air_temperature', AT), pointId(CYCLE, 'co2', AT), pointId(CYCLE, 'air_temperature', AT + 1)];
  t.equal(new Set([id, ...others]).size, 4);
  // Ids of one cycle and metric sort by instant, as UUIDv7 text does.
  const later = pointId(CYCLE, 'air_temperature', AT + 3_600_000);
  t.ok(id < later);
});

t.test('many cycles and metrics at one instant: no two share an id', async (t) => {
  const ids = new Set<string>();
  let n = 0;
  for (let c = 0; c < 300; c++) {
    const cycle = `0192f1a0-0000-7000-8000-${String(c).padStart(12, '0')}`;
    for (const m of ['air_temperature', 'relative_humidity', 'co2', 'par', 'global_radiation', 'pipe_temperature', 'vent_position']) {
      ids.add(pointId(cycle, m, AT));
      n++;
    }
  }
  t.equal(ids.size, n);
});

t.test('text that is no UUIDv7 names no instant', async (t) => {
  for (const bad of [
    '',
    'x',
    '00000000-0000-4000-8000-000000000000',
    '0192f1a0-0000-7000-c000-000000000001',
    '0192f1a0000070008000000000000001',
    `${pointId(CYCLE, 'co2', AT)}0`,
  ]) {
    t.equal(pointInstant(bad), null, JSON.stringify(bad));
  }
});
