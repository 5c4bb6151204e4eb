import t from 'tap';
import { parseFrame } from '../../src/scales/frames.js';
import { Weighing } from '../../src/scales/weighing.js';

const feed = (w: Weighing, lines: string[]) => lines.map((l) => w.feed(parseFrame(l)!)).filter((kg) => kg !== null);

t.test('one harvest per stable weight after a return to zero', async (t) => {
  const w = new Weighing({ zeroKg: 0.05, plainRepeats: 3 });
  t.same(feed(w, ['ST,GS,+0012.34kg']), [], 'nothing before the first zero: the crate may have been recorded before a restart');
  t.equal(w.state, 'waiting_for_zero');
  t.same(feed(w, ['ST,GS,+0000.00kg']), []);
  t.equal(w.state, 'ready');
  t.same(feed(w, ['US,GS,+0003.10kg', 'US,GS,+0012.90kg', 'US,GS,+0012.36kg']), [], 'unstable readings are not taken');
  t.equal(w.state, 'settling');
  t.same(feed(w, ['ST,GS,+0012.34kg']), [12.34], 'the stable weight is recorded');
  t.same(
    feed(w, ['ST,GS,+0012.34kg', 'ST,GS,+0012.34kg', 'US,GS,+0014.00kg', 'ST,GS,+0015.00kg']),
    [],
    'not again while it sits there, nor when more is piled on',
  );
  t.equal(w.state, 'recorded');
  t.same(feed(w, ['US,GS,+0003.00kg', 'US,GS,+0000.01kg']), [], 'an unstable zero does not re-arm');
  t.same(feed(w, ['ST,GS,+0015.00kg']), [], 'so the same crate put back is not recorded');
  t.same(feed(w, ['ST,GS,+0000.03kg', 'ST,GS,+0009.87kg']), [9.87], 'within the zero band, then the next crate');
});

t.test('negative, tare, overload and busy frames never record', async (t) => {
  const w = new Weighing({ zeroKg: 0.05, plainRepeats: 3 });
  feed(w, ['S S 0.00 kg']);
  t.same(feed(w, ['S S -2.00 kg']), []);
  t.equal(w.state, 'out_of_range');
  t.same(feed(w, ['S +']), []);
  t.equal(w.state, 'out_of_range');
  t.same(feed(w, ['ST,TR,+0002.00kg']), [], 'a tare frame is not a weight on the scale');
  t.same(feed(w, ['S I', 'S S 0.00 kg', 'S S 4.20 kg']), [4.2]);
});

t.test('plain lines are stable after repeats of the same weight', async (t) => {
  const w = new Weighing({ zeroKg: 0.05, plainRepeats: 3 });
  t.same(feed(w, ['0.00 kg', '0.00 kg']), []);
  t.equal(w.state, 'waiting_for_zero', 'two zeros are not yet a stable zero');
  t.same(feed(w, ['0.00 kg', '5.10 kg', '5.12 kg', '5.12 kg']), []);
  t.same(feed(w, ['5.12 kg']), [5.12], 'the third same reading');
  t.same(feed(w, ['5.12 kg', '5.12 kg', '5.12 kg']), []);
  t.same(feed(w, ['0.00 kg', '0.00 kg', '0.00 kg', '11 lb', '11 lb', '11 lb']), [4.99]);
  w.disconnected();
  t.same(feed(w, ['0.00 kg', '0.00 kg', '0.00 kg', '7.00 kg', '7.00 kg']), [], 'repeats count again after a disconnect');
  t.same(feed(w, ['7.00 kg']), [7]);
});

t.test('a disconnect keeps what was recorded', async (t) => {
  const w = new Weighing({ zeroKg: 0.05, plainRepeats: 3 });
  t.same(feed(w, ['ST,GS,+0000.00kg', 'ST,GS,+0008.00kg']), [8]);
  w.disconnected();
  t.same(feed(w, ['ST,GS,+0008.00kg']), [], 'the crate still on the scale after the cable came back is not recorded twice');
  t.same(feed(w, ['ST,GS,+0000.00kg', 'ST,GS,+0006.00kg']), [6]);
});
