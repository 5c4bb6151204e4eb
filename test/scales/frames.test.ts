import t from 'tap';
import { LineSplitter, MAX_LINE, parseFrame } from '../../src/scales/frames.js';

t.test('the common indicator format', async (t) => {
  t.match(parseFrame('ST,GS,+0012.34kg'), { kind: 'weight', stable: true, kg: 12.34, unit: 'kg', mode: 'gross', format: 'indicator' });
  t.match(parseFrame('US,GS,+0012.30kg'), { kind: 'weight', stable: false, kg: 12.3 });
  t.match(parseFrame('ST,NT,-0000.02kg'), { kind: 'weight', stable: true, kg: -0.02, mode: 'net' });
  t.match(parseFrame('ST,GS, +  12.34 kg'), { kind: 'weight', kg: 12.34 }, 'padded with spaces');
  t.match(parseFrame('ST,01,GS,+0012.34kg'), { kind: 'weight', kg: 12.34 }, 'with a device number');
  t.match(parseFrame('ST,TR,+0001.20kg'), { kind: 'weight', mode: 'tare' });
  t.same(parseFrame('OL,GS,+9999.99kg'), { kind: 'overload', format: 'indicator' });
  t.match(parseFrame('\x02ST,GS,+0012.34kg\x03'), { kg: 12.34 }, 'STX and ETX around a frame');
});

t.test('units convert to kilograms, rounded to the gram', async (t) => {
  t.match(parseFrame('ST,GS,+0027.20lb'), { kg: 12.338, value: 27.2, unit: 'lb' });
  t.match(parseFrame('ST,GS,+12340g'), { kg: 12.34, unit: 'g' });
  t.match(parseFrame('S S     435.5 oz'), { kg: 12.346, unit: 'oz' });
  t.match(parseFrame('12,5 kg'), { kg: 12.5 }, 'a decimal comma');
  t.match(parseFrame('10 lbs'), { kg: 4.536 });
  t.equal((parseFrame('ST,GS,-0000.00kg') as { kg: number }).kg, 0, 'minus zero is zero');
});

t.test('Mettler SICS', async (t) => {
  t.match(parseFrame('S S      12.34 kg'), { kind: 'weight', stable: true, kg: 12.34, format: 'sics' });
  t.match(parseFrame('S D      12.31 kg'), { kind: 'weight', stable: false, kg: 12.31 });
  t.same(parseFrame('S +'), { kind: 'overload', format: 'sics' });
  t.same(parseFrame('S -'), { kind: 'underload', format: 'sics' });
  t.same(parseFrame('S I'), { kind: 'busy', format: 'sics' });
  t.equal(parseFrame('S S'), null, 'a stable status without a weight');
});

t.test('plain lines', async (t) => {
  t.match(parseFrame('12.34 kg'), { kind: 'weight', stable: null, kg: 12.34, format: 'plain' });
  t.match(parseFrame('  +12.34kg  '), { kg: 12.34 });
  t.match(parseFrame('G 12.34 kg'), { mode: 'gross' });
  t.match(parseFrame('12.34 kg N'), { mode: 'net' });
});

t.test('noise and hostile lines are not frames', async (t) => {
  for (const line of [
    '',
    '12.34',
    'kg',
    'ST,GS,',
    'ST,GS,+12.34',
    'ST,XX,+12.34kg',
    'XX,GS,+12.34kg',
    'ST,GS,+12.34kgkg',
    'ST,GS,+1e3kg',
    'ST,GS,NaNkg',
    'ST,GS,Infinitykg',
    'ST,GS,+12.34.5kg',
    'ST,GS,+0012.34kg\u0000',
    'ST,GS,\u00ff12.34kg',
    '12.34 stone',
    '=HYPERLINK("x") kg',
    '99999999999 kg',
    'S X 12.34 kg',
    'ST,GS,' + '1'.repeat(MAX_LINE) + 'kg',
    '1'.repeat(10_000) + ' kg',
  ]) {
    t.equal(parseFrame(line), null, JSON.stringify(line.slice(0, 40)));
  }
});

t.test('the line splitter', async (t) => {
  const s = new LineSplitter();
  t.same(s.push('ST,GS,+0012.34kg\r\nST,GS,+00'), ['ST,GS,+0012.34kg'], 'a whole line, a partial kept');
  t.same(s.push('12.35kg\r\n'), ['ST,GS,+0012.35kg'], 'the partial completed by the next chunk');
  t.same(s.push('a\rb\nc\r\n\r\nd'), ['a', 'b', 'c'], 'CR, LF and CRLF end lines; empty lines are dropped');
  s.reset();
  t.same(s.push('\n'), [], 'reset forgets the partial line');

  const long = new LineSplitter();
  t.same(long.push('x'.repeat(MAX_LINE + 5)), [], 'an overlong partial line is dropped');
  t.same(long.push('y'.repeat(1000)), [], 'and what follows it up to the line end');
  t.same(long.push('tail\nST,GS,+0001.00kg\n'), ['ST,GS,+0001.00kg'], 'the next line is read again');
  t.same(long.push(Buffer.from([0xff, 0xfe, 0x0a])), ['\u00ff\u00fe'], 'bytes that are not ASCII reach the parser as noise');
});
