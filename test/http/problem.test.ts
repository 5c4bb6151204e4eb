import t from 'tap';
import { conflict, HttpProblem } from '../../src/http/problem.js';

t.test("a problem's extra fields ride along but never replace its standard members", async (t) => {
  const body = conflict('The walk is still being scored.', { job_id: 'j1', walk_status: 'running' }).toBody();
  t.match(body, {
    status: 409,
    code: 'conflict',
    title: 'Conflict',
    detail: 'The walk is still being scored.',
    job_id: 'j1',
    walk_status: 'running',
  });
  for (const name of ['type', 'title', 'status', 'detail', 'instance', 'code']) {
    t.throws(
      () => new HttpProblem(409, 'conflict', 'x', { [name]: 'queued' }),
      TypeError,
      `an extra "${name}" is refused where the problem is made`,
    );
  }
});
