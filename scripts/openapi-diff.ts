// Compares two OpenAPI documents, ignoring wording (`description`, `summary`): a redesign of
// the inside must leave the contract as it was. Usage:
//   node --import tsx scripts/openapi-diff.ts before.json after.json   (exit 1 when they differ)
//   node --import tsx scripts/openapi-diff.ts --dump out.json           (writes this build's document)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const WORDING = new Set(['description', 'summary']);

/** The document without its wording, keys sorted, so equal contracts compare equal. */
export function contractOf(doc: unknown): unknown {
  if (Array.isArray(doc)) return doc.map(contractOf);
  if (doc && typeof doc === 'object') {
    return Object.fromEntries(
      Object.keys(doc)
        .filter((k) => !WORDING.has(k))
        .sort()
        .map((k) => [k, contractOf((doc as Record<string, unknown>)[k])]),
    );
  }
  return doc;
}

/** Every JSON path where two contracts differ. */
export function differences(a: unknown, b: unknown, at = '$'): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) => differences((a as any)[k], (b as any)[k], `${at}.${k}`));
  }
  return [`${at}: ${JSON.stringify(a)?.slice(0, 120)} → ${JSON.stringify(b)?.slice(0, 120)}`];
}

async function dump(out: string): Promise<void> {
  const { createApp } = await import('../src/app.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-openapi-'));
  try {
    const app = await createApp({ config: { dataDir: dir, adminToken: 'x'.repeat(32) }, env: {}, startBackground: false });
    writeFileSync(out, JSON.stringify(app.document, null, 2));
    await app.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]).endsWith('openapi-diff.ts')) {
  const [a, b] = process.argv.slice(2);
  if (a === '--dump' && b) await dump(b);
  else if (a && b) {
    const diff = differences(contractOf(JSON.parse(readFileSync(a, 'utf8'))), contractOf(JSON.parse(readFileSync(b, 'utf8'))));
    for (const d of diff) console.log(d);
    console.log(diff.length ? `${diff.length} differences beyond wording` : 'the same contract (wording aside)');
    process.exit(diff.length ? 1 : 0);
  } else {
    console.error('usage: openapi-diff.ts before.json after.json | --dump out.json');
    process.exit(2);
  }
}
