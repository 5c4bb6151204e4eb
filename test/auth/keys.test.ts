import t from 'tap';
import { generateApiKey, hashBytes, hashSecret, keyLookup, secretMatches } from '../../src/auth/keys.js';

t.test('a new key: shown once in full, stored as a SHA-256, displayed by its ends', async (t) => {
  const k = generateApiKey();
  t.match(k.apiKey, /^cwk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
  t.equal(keyLookup(k.apiKey), k.lookup);
  t.equal(k.secretHash, hashSecret(k.apiKey));
  t.match(k.secretHash, /^[0-9a-f]{64}$/);
  t.notOk(k.display.includes(k.apiKey.slice(21, -4)), 'the display form leaves the secret out');
  t.not(generateApiKey().apiKey, k.apiKey);
});

t.test('keyLookup refuses what is not shaped like a key', async (t) => {
  const k = generateApiKey().apiKey;
  for (const bad of ['', 'cwk_', k + 'x', k.slice(0, -1), k.replace('cwk_', 'cwx_'), k.toUpperCase(), ` ${k}`])
    t.equal(keyLookup(bad), null, JSON.stringify(bad));
});

t.test('secretMatches: the stored hash as hex or as bytes, and never true without one', async (t) => {
  const k = generateApiKey();
  const other = generateApiKey();
  t.ok(secretMatches(k.apiKey, k.secretHash), 'hex');
  t.ok(secretMatches(k.apiKey, hashBytes(k.secretHash)), 'bytes');
  t.notOk(secretMatches(other.apiKey, k.secretHash));
  t.notOk(secretMatches(other.apiKey, hashBytes(k.secretHash)));
  t.notOk(secretMatches(k.apiKey.slice(0, -1) + (k.apiKey.endsWith('A') ? 'B' : 'A'), k.secretHash), 'one character off');
  // The dummy compared against when no row was found must not let its own preimage in.
  t.notOk(secretMatches('cwk_0000000000000000_' + 'x'.repeat(43), undefined));
  t.notOk(secretMatches(k.apiKey, undefined));
});
