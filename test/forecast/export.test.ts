import t from 'tap';
import { csvCell, csvText, noteText } from '../../src/forecast/export.js';

t.test('CSV cells: formulas neutralised, quoting, decimal commas', async (t) => {
  for (const danger of ['=1+1', '+31 6 1234', '-2+3', '@SUM(A1)', '\tcmd', '\r=x', '=HYPERLINK("http://x","y")']) {
    const cell = csvCell(danger, 'comma');
    t.notOk(/^"?[=+\-@\t\r]/.test(cell), `${JSON.stringify(danger)} → ${JSON.stringify(cell)}`);
  }
  t.equal(csvCell('=1+1', 'comma'), "'=1+1");
  t.equal(csvCell('a,b', 'comma'), '"a,b"');
  t.equal(csvCell('a,b', 'semicolon'), 'a,b', 'a comma is text between semicolons');
  t.equal(csvCell('a;b', 'semicolon'), '"a;b"');
  t.equal(csvCell('say "hi"', 'comma'), '"say ""hi"""');
  t.equal(csvCell('two\nlines', 'comma'), '"two\nlines"');
  t.equal(csvCell(12.5, 'comma'), '12.5');
  t.equal(csvCell(12.5, 'semicolon'), '12,5');
  t.equal(csvCell(-3.25, 'semicolon'), '-3,25', 'a negative number is a number, not a formula');
  t.equal(csvCell(null, 'comma'), '');
  t.equal(csvCell(Number.NaN, 'comma'), '');
  const text = csvText(
    [
      ['week', 'kg'],
      ['2026-W07', 1.5],
    ],
    'semicolon',
  );
  t.equal(text, '\uFEFFweek;kg\r\n2026-W07;1,5\r\n');
});

t.test('week note text', async (t) => {
  t.equal(noteText(JSON.stringify({ text: 'aphids in row 3' })), 'aphids in row 3');
  t.equal(noteText(JSON.stringify({ note: 'ok' })), 'ok');
  t.equal(noteText(JSON.stringify({ pests: 'none', n: 2 })), '{"pests":"none","n":2}');
});
