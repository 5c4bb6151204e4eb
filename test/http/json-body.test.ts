// The JSON reader's own checks, without a server: nesting counted without recursion (brackets in
// strings and escaped quotes are not nesting), UTF-8 strictly, __proto__ refused.
import t from 'tap';
import { decodeJsonText, jsonDepth, MAX_JSON_DEPTH, parseJsonText } from '../../src/http/json-body.js';
import type { Invalid } from '../../src/errors.js';

/** The message of the one field an Invalid names, or null when nothing was thrown. */
const refusal = (f: () => unknown): string | null => {
  try {
    f();
  } catch (err) {
    return (err as Invalid).issues[0]!.message;
  }
  return null;
};

t.test('depth: brackets outside strings only', async (t) => {
  t.equal(jsonDepth('{}'), 1);
  t.equal(jsonDepth('{"a":[1,{"b":[]}]}'), 4);
  t.equal(jsonDepth('{"a":"[[[[{{{{"}'), 1, 'brackets in a string are text');
  t.equal(jsonDepth('{"a":"\\"[[[["}'), 1, 'an escaped quote does not end the string');
  t.equal(jsonDepth('{"a":"\\\\"}[[['), 3, 'an escaped backslash does');
  t.equal(jsonDepth('['.repeat(1_000_000), 10), 11, 'stops past the limit, a million deep in one loop');
});

t.test('parse: within the depth limit, objects and arrays at the top, no __proto__', async (t) => {
  t.same(
    parseJsonText('[' + '['.repeat(MAX_JSON_DEPTH - 1) + ']'.repeat(MAX_JSON_DEPTH)),
    JSON.parse('[' + '['.repeat(MAX_JSON_DEPTH - 1) + ']'.repeat(MAX_JSON_DEPTH)),
  );
  t.match(
    refusal(() => parseJsonText('['.repeat(MAX_JSON_DEPTH + 1) + ']'.repeat(MAX_JSON_DEPTH + 1))),
    /nested more than 64 levels/,
  );
  t.match(
    refusal(() => parseJsonText('"text"')),
    /not a JSON object or array/,
  );
  t.match(
    refusal(() => parseJsonText('{"a":')),
    /not valid JSON/,
  );
  t.match(
    refusal(() => parseJsonText('{"b":{"\\u005f_proto__":{"polluted":true}}}')),
    /__proto__/,
  );
  t.equal(({} as { polluted?: boolean }).polluted, undefined);
});

t.test('UTF-8: strict, with a BOM dropped', async (t) => {
  t.equal(decodeJsonText(Buffer.from('\ufeff{"a":"één"}')), '{"a":"één"}');
  t.throws(() => decodeJsonText(Buffer.from([0x7b, 0xff, 0x7d])), { code: 'invalid_encoding' });
  t.throws(() => decodeJsonText(Buffer.from([0x7b, 0xed, 0xa0, 0x80, 0x7d])), { code: 'invalid_encoding' }, 'a surrogate encoded as UTF-8');
});
