import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/**
 * Debian's Chromium driven by playwright-core (no browser download): the staff app's tests run in a
 * real browser against a real box. Playwright gives every launch a fresh user-data-dir of its own.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Screenshots of the tests (git-ignored). */
export const OUTPUT = path.join(root, 'test-output', 'web');

/** Why the browser tests cannot run here, or undefined when they can. */
export function browserMissing(): string | undefined {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH): the browser tests skip`;
  return undefined;
}

export async function launch(t: { teardown(fn: () => unknown): void }): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
  t.teardown(() => browser.close());
  return browser;
}

export interface Viewport {
  name: string;
  width: number;
  height: number;
  mobile: boolean;
}
export const PHONE: Viewport = { name: 'phone-360', width: 360, height: 740, mobile: true };
export const DESKTOP: Viewport = { name: 'desktop-1366', width: 1366, height: 768, mobile: false };

export async function newContext(browser: Browser, v: Viewport): Promise<BrowserContext> {
  return browser.newContext({
    viewport: { width: v.width, height: v.height },
    deviceScaleFactor: v.mobile ? 2 : 1,
    isMobile: v.mobile,
    hasTouch: v.mobile,
    timezoneId: 'Europe/Amsterdam',
    locale: 'en-GB',
    // axe-core is added to each page as a script; the app's CSP (script-src 'self') would refuse it.
    bypassCSP: true,
  });
}

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; html: string }[];
}

/** axe-core on the page as it is: the serious and critical violations (none is the goal). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ path: AXE });
  // Runs in the page (the test's tsconfig has no DOM types: the page's globals are reached through globalThis).
  const result = await page.evaluate(async () => {
    const g = globalThis as unknown as {
      axe: { run: (ctx: unknown, opts: object) => Promise<{ violations: AxeViolation[] }> };
      document: unknown;
    };
    const r = await g.axe.run(g.document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 3).map((n) => ({ target: n.target, html: n.html.slice(0, 200) })),
    }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

export async function screenshot(page: Page, v: Viewport, name: string): Promise<string> {
  const dir = path.join(OUTPUT, v.name);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
