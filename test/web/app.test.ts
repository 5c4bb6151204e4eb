// The staff app in a real browser (issue 38): Debian's Chromium, driven by playwright-core, against a
// real box on loopback with a fresh database. A grower's jobs at 360×740 (a phone, touch) and at
// 1366×768 (the office PC): sign in, build the tree, walk a row with a rendered walk and see its
// overlays, correct it and see the corrected counts change, import a climate export through its
// preview, record a harvest and see it in the week, revoke a key, sign out. Every screen is
// screenshot under test-output/web/ and checked with axe-core: no serious or critical violation.
import t, { type Test } from 'tap';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createOrg, startServer, type TestServer } from '../helpers/server.js';
import { browserMissing, DESKTOP, launch, newContext, PHONE, screenshot, seriousViolations, type Viewport } from '../helpers/browser.js';
import { renderWalk } from '../../scripts/render/walk.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const missing = browserMissing();
if (missing) {
  t.plan(0, missing);
} else {
  // The app as `npm start` serves it: built from web/ when the build is missing or stale.
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-web.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the staff app did not build');

  const dir = t.testdir();
  const walk = await renderWalk({ out: path.join(dir, 'walk'), seconds: 4, fps: 10, width: 480, height: 270, speed: 0.3, seed: 5 });
  const CLIP = walk.files[0]!;
  const CLIMATE = path.join(root, 'test', 'fixtures', 'climate', 'priva-nl.csv');

  const s = await startServer(t);
  const browser = await launch(t);

  for (const v of [PHONE, DESKTOP]) {
    t.test(`a grower's jobs at ${v.width}×${v.height}`, async (t) => journey(t, s, v));
  }

  async function journey(t: Test, s: TestServer, v: Viewport) {
    const { orgId, adminKey } = await createOrg(s, `Growers ${v.name}`);
    const ctx = await newContext(browser, v);
    t.teardown(() => ctx.close());
    const page = await ctx.newPage();
    page.setDefaultTimeout(30_000);
    // Where a step fails, the page as it was then is kept beside the screenshots.
    t.teardown(async () => {
      if (!t.passing()) await screenshot(page, v, 'failed-here').catch(() => undefined);
    });
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // Every confirm() of the app (delete, revoke) is answered yes.
    page.on('dialog', (d) => void d.accept());

    // The form being filled: the one open section (a level's page also holds a closed edit form).
    const open = page.locator('details[open]');
    const check = async (name: string) => {
      await page.waitForLoadState('networkidle');
      const violations = await seriousViolations(page);
      t.same(violations, [], `${name}: no serious or critical accessibility violation`);
      await screenshot(page, v, name);
      // Big enough to tap: no visible control below 44 px in its smaller side (WCAG 2.5.5 asks 44).
      const small = await page.evaluate(() => {
        const g = globalThis as any;
        return [...g.document.querySelectorAll('button, a, input, select, summary, [role=button]')]
          .filter((el: any) => el.getClientRects().length && !el.closest('.crumbs, p, li.when, td, .hint, svg, .truss-grid, label'))
          .map((el: any) => ({ r: el.getBoundingClientRect(), html: el.outerHTML.slice(0, 80) }))
          .filter((x: any) => x.r.width > 0 && x.r.right > 0 && Math.min(x.r.width, x.r.height) < 44)
          .map((x: any) => `${Math.round(x.r.width)}×${Math.round(x.r.height)} ${x.html}`);
      });
      t.same(small, [], `${name}: every control is at least 44 px`);
    };

    // Sign in: a wrong key is refused in words, the right one opens the farms.
    await page.goto(s.base + '/');
    await page.getByLabel('API key').fill('cwk_not_a_real_key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That key is unknown or revoked').waitFor();
    await check('sign-in');
    await page.getByLabel('API key').fill(adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: `Growers ${v.name}` }).waitFor();
    const cookies = await ctx.cookies();
    t.ok(
      cookies.some((c) => c.name === 'service_key' && c.httpOnly),
      'the session is the HttpOnly service_key cookie',
    );

    // Build the tree through the app: farm > greenhouse > row > crop cycle.
    await page.getByText('Add a farm').click();
    await open.getByLabel('Name').fill('Westland');
    await open.getByLabel('Place or address').fill('Naaldwijk');
    await check('home');
    await open.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { level: 1, name: 'Westland' }).waitFor();

    await page.getByText('Add a greenhouse').click();
    await open.getByLabel('Name', { exact: true }).fill('Kas 4');
    t.equal(await open.getByLabel('Time zone').inputValue(), 'Europe/Amsterdam', "the time zone starts as the browser's");
    await open.getByLabel('Latitude').fill('100');
    await open.getByLabel('Longitude').fill('4,21');
    await open.getByRole('button', { name: 'Create' }).click();
    // Checked as the API checks it, at the field, and nothing typed is lost.
    await page.getByText('must be at most 90').waitFor();
    t.equal(await open.getByLabel('Name', { exact: true }).inputValue(), 'Kas 4', 'the name typed stays after a refusal');
    await check('farm');
    await open.getByLabel('Latitude').fill('51.99');
    await open.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { level: 1, name: 'Kas 4' }).waitFor();
    t.match(
      await page.locator('.sub').textContent(),
      /Europe\/Amsterdam · 51\.99° N, 4\.21° E/,
      'a decimal comma is read as the API wants it',
    );

    await page.getByText('Add a row').click();
    await open.getByLabel('Name', { exact: true }).fill('Row 12');
    await open.getByLabel('Plants in the row').fill('240');
    await open.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { level: 1, name: 'Row 12' }).waitFor();
    await check('greenhouse-row');

    await page.getByText('Start a crop cycle').click();
    await open.getByLabel('Name', { exact: true }).fill('Tomato 2026');
    await open.getByLabel('Planted on').fill('2026-01-05');
    await open.getByLabel('Plant density').fill('2.5');
    await open.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { level: 1, name: 'Row 12 · Tomato 2026' }).waitFor();
    await check('cycle');
    const cyclePath = new URL(page.url()).pathname;

    // Edit: only what changed is sent, and the tree shows it.
    await page.getByText('Edit the crop cycle').click();
    await page.getByLabel('Variety').fill('Merlice');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.locator('.sub').filter({ hasText: 'Merlice' }).waitFor();

    // Walk the row: the week is this week, the upload shows its progress, the scoring its own.
    await page.getByRole('link', { name: /Walk the row/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Walk Row 12' }).waitFor();
    const week = await page.getByLabel('Week').inputValue();
    t.match(week, /^\d{4}-W\d{2}$/, 'the week starts as this week');
    t.equal(await page.locator('#walk-file').getAttribute('capture'), 'environment', 'the phone opens its camera');
    await page.getByRole('button', { name: 'Upload and count' }).click();
    await page.getByText('Choose a clip or a photo first.').waitFor();
    await page.locator('#walk-file').setInputFiles(CLIP);
    await check('walk-row');
    await page.getByRole('button', { name: 'Upload and count' }).click();
    await page.waitForURL(/\/walks\/[0-9a-f-]+$/);
    const walkId = page.url().split('/').at(-1)!;
    // Scored: the counts by ripeness, model beside corrected, and the frames with their overlays.
    await page.getByRole('table', { name: 'Fruit counted' }).waitFor({ timeout: 240_000 });
    const overlays = page.locator('.strip img');
    t.ok((await overlays.count()) > 0, 'the frames with their overlays are shown');
    await overlays.first().scrollIntoViewIfNeeded();
    await t.resolves(
      page.waitForFunction((el: any) => el.complete && el.naturalWidth > 0, await overlays.first().elementHandle()),
      'an overlay image loads from the box',
    );
    t.match(
      await overlays.first().getAttribute('src'),
      new RegExp(`/api/observations/${walkId}/frames/\\d+/overlay`),
      "it is the box's overlay",
    );
    await check('walk');

    // Correct it: tap a box and remove the fruit; draw a box to add one; undo; the counts follow.
    const total = async (which: 'model' | 'corrected', r = 'total') => Number(await page.getByTestId(`${which}-${r}`).textContent());
    const model = await total('model');
    t.ok(model > 0, `the model counted ${model} fruit`);
    t.equal(await total('corrected'), model, 'no correction yet: corrected = model');
    const box = page.locator('rect[data-fruit]').first();
    await (v.mobile ? box.tap({ force: true }) : box.click({ force: true }));
    await page.getByRole('button', { name: 'Not a fruit: remove' }).click();
    await page.waitForFunction(
      (m) => Number((globalThis as any).document.querySelector('[data-testid=corrected-total]')?.textContent) === m - 1,
      model,
    );
    t.equal(await total('model'), model, 'the model count stays');
    t.equal(await total('corrected'), model - 1, 'a fruit removed: one less corrected');
    await check('walk-corrected');

    const redBefore = await total('corrected', 'red');
    await page.getByRole('button', { name: 'Add a missed fruit' }).click();
    const svg = await page.locator('.frame-editor svg').boundingBox();
    const [x0, y0] = [svg!.x + svg!.width * 0.05, svg!.y + svg!.height * 0.05];
    await page.mouse.move(x0, y0);
    await page.mouse.down();
    await page.mouse.move(x0 + svg!.width * 0.1, y0 + svg!.height * 0.12, { steps: 5 });
    await page.mouse.up();
    await page.getByRole('group', { name: 'The fruit you drew' }).getByRole('button', { name: 'red' }).click();
    await page.waitForFunction(
      (r) => Number((globalThis as any).document.querySelector('[data-testid=corrected-red]')?.textContent) === r + 1,
      redBefore,
    );
    t.equal(await total('corrected'), model, 'a fruit added: the corrected total is back');
    await page
      .getByRole('button', { name: 'Add a missed fruit' })
      .or(page.getByRole('button', { name: 'Stop adding' }))
      .first()
      .click();
    await page.getByRole('button', { name: 'Undo last correction' }).click();
    await page.waitForFunction(
      (r) => Number((globalThis as any).document.querySelector('[data-testid=corrected-red]')?.textContent) === r,
      redBefore,
    );
    t.equal(await total('corrected'), model - 1, 'undo takes the added fruit away again');

    // A 409 comes back in plain words: counts set elsewhere while this page showed none.
    const base = `/api/organizations/${orgId}/walks/${walkId}/corrections`;
    const scoredGreen = (await s.request('GET', base, { key: adminKey })).body.corrected_counts.green;
    const elsewhere = await s.request('POST', base, { key: adminKey, body: { kind: 'counts', counts: { green: 3 } } });
    t.equal(elsewhere.status, 201);
    await page.getByText('Set the counts by hand').click();
    await page.getByLabel('Green', { exact: true }).fill('7');
    await page.getByRole('button', { name: 'Set the counts' }).click();
    await page
      .locator('.problem')
      .filter({ hasText: /undo it|change it/i })
      .waitFor();
    t.equal(await page.getByLabel('Green', { exact: true }).inputValue(), '7', 'what was typed stays after the 409');
    await check('walk-conflict');

    // Records: a harvest (a slip refused at the field first), then seen in the week.
    await page.goto(s.base + cyclePath + '/records');
    await page.getByRole('heading', { level: 1, name: 'Records' }).waitFor();
    t.equal(await page.getByLabel('Week', { exact: true }).inputValue(), week);
    await page.getByLabel('Harvested').fill('-3');
    await page.getByRole('button', { name: 'Save the harvest' }).click();
    await page.getByText('must be at least 0').waitFor();
    await page.getByLabel('Harvested').fill('12,5');
    await page.getByLabel('Note').fill('first truss');
    // The session ends meanwhile (the cookie is gone): the box's 401 opens the sign-in over the page,
    // and what was typed is still there after signing in again.
    await ctx.clearCookies();
    await page.getByRole('button', { name: 'Save the harvest' }).click();
    const again = page.getByRole('dialog', { name: 'Sign in again' });
    await again.getByLabel('API key').fill(adminKey);
    await again.getByRole('button', { name: 'Sign in' }).click();
    await again.waitFor({ state: 'hidden' });
    t.equal(await page.getByLabel('Harvested').inputValue(), '12,5', 'the kilograms typed survive the lost session');
    t.equal(await page.getByLabel('Note').inputValue(), 'first truss');
    await page.getByRole('button', { name: 'Save the harvest' }).click();
    await page.locator('.harvests').getByText('12.5 kg').waitFor();
    await check('records-harvest');
    // A harvest CSV: one more line for this week.
    await page.getByText('Import harvests from a CSV file').click();
    await page
      .locator('#harvest-csv')
      .setInputFiles({ name: 'picks.csv', mimeType: 'text/csv', buffer: Buffer.from(`week;kg;note\n${week};3,5;late pick\n`) });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByText('1 harvest stored.').waitFor();
    await page.locator('.harvests').getByText('3.5 kg').waitFor();

    await page.getByRole('link', { name: 'Irrigation' }).click();
    await page.getByLabel('Water given').fill('850');
    await page.getByRole('textbox', { name: 'Drain (L)' }).fill('260');
    await page.getByRole('button', { name: 'Save the entry' }).click();
    await page.getByRole('cell', { name: '850' }).waitFor();
    await check('records-irrigation');

    await page.getByRole('link', { name: 'Truss count' }).click();
    await page.getByLabel('Plant 1, truss 1: fruit').fill('5');
    await page.getByLabel('Plant 1, truss 2: fruit').fill('4');
    await page.getByLabel('Plant 2, truss 1: fruit').fill('x');
    await page.getByRole('button', { name: 'Save the count' }).click();
    await page.getByText('Plant 2, truss 1: fruits must be a whole number').waitFor();
    await page.getByLabel('Plant 2, truss 1: fruit').fill('6');
    await page.getByRole('button', { name: 'Save the count' }).click();
    await page.getByText('Saved 3 trusses').waitFor();
    await check('records-trusses');

    await page.getByRole('link', { name: 'Fruit mass' }).click();
    await page.getByLabel('Green fruit').fill('95');
    await page.getByLabel('Turning fruit').fill('100');
    await page.getByLabel('Red fruit').fill('105');
    await page.getByRole('button', { name: 'Save the fruit mass' }).click();
    await page.getByText(/In force now/).waitFor();

    await page.getByRole('link', { name: 'Week note' }).click();
    await page.getByLabel(/What happened in/).fill('Leaf picking done; first red trusses.');
    await page.getByRole('button', { name: 'Save the note' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await check('records-note');

    // The week: the harvest (12.5 + 3.5 kg) and the note are there; the walk's corrected counts too.
    await page.goto(s.base + `${cyclePath}/week/${week}`);
    await page.locator('section.week[aria-busy="false"]').waitFor();
    await page
      .locator('.card')
      .filter({ has: page.getByRole('heading', { name: 'Harvest' }) })
      .getByText('16 kg')
      .waitFor();
    await page.getByText('Leaf picking done; first red trusses.').waitFor();
    const corrected = (await s.request('GET', base, { key: adminKey })).body.corrected_counts;
    t.equal(corrected.total, model - 1 - scoredGreen + 3, 'the counts set elsewhere replaced the green class');
    t.equal(
      await page.getByTestId('corrected-total').first().textContent(),
      String(corrected.total),
      "the week counts the walk's corrected fruit",
    );
    t.equal(await page.getByTestId('model-total').first().textContent(), String(model), 'and its model count beside them');
    await page.waitForLoadState('networkidle');
    await check('week');

    // Climate: an export through its preview, the import listed with undo, a chart of a metric.
    await page.goto(s.base + cyclePath + '/climate');
    await page.locator('#climate-file').setInputFiles(CLIMATE);
    await page.getByRole('button', { name: 'Check the file' }).click();
    await page.getByText('Columns to import').waitFor();
    t.ok(await page.getByRole('cell', { name: 'Air temperature' }).count(), 'the preview reads the temperature column');
    await check('climate-preview');
    await page.getByRole('button', { name: /^Import \d+ columns$/ }).click();
    await page.getByText(/Imported: \d+ new hourly values/).waitFor();
    await page.locator('.imports').getByText('priva-nl.csv').waitFor();
    await page.locator('#chart-from').fill('2021-03-13');
    await page.locator('#chart-to').fill('2021-03-14');
    await page.locator('.chart canvas').waitFor();
    await check('climate');
    await page.locator('.imports').getByRole('button', { name: 'Undo' }).click();
    await page
      .locator('.imports')
      .getByText(/undone/)
      .waitFor();

    // Keys: create one (the secret shown once), rename it, revoke it; the box refuses it then.
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { level: 1, name: 'Keys' }).waitFor();
    await page.getByLabel('Name').fill('harvest tablet');
    await page.getByRole('button', { name: 'Create the key' }).click();
    const secret = await page.getByLabel('New key', { exact: true }).inputValue();
    t.match(secret, /^cwk_/, 'the new secret is shown');
    t.equal((await s.request('GET', '/api/session', { key: secret })).status, 200, 'the new key works');
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await check('keys-secret');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    t.equal(await page.getByText(secret).count(), 0, 'the secret is gone from the page');
    const row = page.locator('.keys li').filter({ hasText: 'harvest tablet' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.waitFor({ state: 'detached' });
    t.equal((await s.request('GET', '/api/session', { key: secret })).status, 401, 'the revoked key is refused');
    // The last admin key cannot be revoked: the 409 in words.
    await page.locator('.keys li').filter({ hasText: 'this is you' }).getByRole('button', { name: 'Revoke' }).click();
    await page.locator('.keys .problem').waitFor();
    t.equal((await s.request('GET', '/api/session', { key: adminKey })).status, 200, 'the last admin key stays active');
    await check('keys');

    // No secret is kept by the app itself.
    const stored = await page.evaluate(() => {
      const g = globalThis as any;
      return JSON.stringify({ ...g.localStorage }) + JSON.stringify({ ...g.sessionStorage }) + g.document.cookie;
    });
    t.notMatch(stored, /cwk_/, 'no key in local storage, session storage or a readable cookie');

    // A member key sees no key management.
    const member = await s.request('POST', `/api/organizations/${orgId}/keys`, { key: adminKey, body: { name: 'picker', role: 'member' } });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    t.equal(await page.evaluate(() => fetch('/api/session').then((r) => r.status)), 401, 'signed out: the cookie is gone');
    await page.getByLabel('API key').fill(member.body.api_key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: `Growers ${v.name}` }).waitFor();
    t.equal(await page.getByRole('link', { name: 'Keys' }).count(), 0, 'a member sees no Keys');
    await page.goto(s.base + '/keys');
    await page.getByText('Only an admin key manages keys').waitFor();
    await check('keys-member');

    t.same(pageErrors, [], 'no error in the page');
  }
}
