import t from 'tap';
import { FailureLimiter } from '../../src/auth/failures.js';

t.test('a client past the limit waits until its window clears', async (t) => {
  let now = 1_000_000;
  const limiter = new FailureLimiter(3, () => now);
  for (let i = 0; i < 3; i++) {
    t.equal(limiter.retryAfter('10.0.0.1'), 0, `failure ${i + 1} is still under the limit`);
    limiter.fail('10.0.0.1');
    now += 1_000;
  }
  t.equal(limiter.retryAfter('10.0.0.1'), 57, 'the oldest of the three leaves the window in 57 s');
  t.equal(limiter.retryAfter('10.0.0.2'), 0, 'another client is not held back');
  now += 57_000;
  t.equal(limiter.retryAfter('10.0.0.1'), 0, 'a minute after the first failure it may try again');
});

t.test('what is remembered stays bounded', async (t) => {
  let now = 0;
  const limiter = new FailureLimiter(3, () => now);
  for (let i = 0; i < 1000; i++) {
    limiter.fail('10.0.0.1');
    now += 10;
  }
  t.equal(limiter.remembered('10.0.0.1'), 3, 'only the newest failures up to the limit are kept');
  t.ok(limiter.retryAfter('10.0.0.1') > 0, 'and they still hold the client back');

  const off = new FailureLimiter(0, () => now);
  for (let i = 0; i < 1000; i++) off.fail('10.0.0.1');
  t.equal(off.remembered('10.0.0.1'), 0, 'with the limit off nothing is kept');
  t.equal(off.retryAfter('10.0.0.1'), 0);
});
