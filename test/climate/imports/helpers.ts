import { dbRows, type TestServer, type Tree } from '../../helpers/server.js';

/** A climate CSV: five-minute rows from `start` (greenhouse wall clock), °F temperature, RH, CO₂. */
export function climateCsv(rows: number, options: { start?: string; temperature?: (i: number) => number; header?: string } = {}): string {
  const start = Date.parse((options.start ?? '2026-03-02T00:00') + ':00Z');
  const lines = [options.header ?? 'time,Air temperature (°F),Relative humidity (%),CO2 (ppm)'];
  for (let i = 0; i < rows; i++) {
    const wall = new Date(start + i * 300_000).toISOString().slice(0, 16).replace('T', ' ');
    lines.push(`${wall},${(options.temperature ?? ((n) => 68 + (n % 12)))(i)},${70 + (i % 5)},${400 + i}`);
  }
  return lines.join('\n') + '\n';
}

export function form(content: string | Uint8Array | Blob, fileName: string, fields: Record<string, string> = {}): FormData {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  fd.append('file', content instanceof Blob ? content : new Blob([content]), fileName);
  return fd;
}

/** Everything the climate tables hold for a cycle, to show that a refused request changed nothing. */
export async function climateState(s: TestServer, tree: Tree) {
  const q = (sql: string) => dbRows(s, sql, tree.cycleId);
  // The undo blobs as text, however the engine hands them back (a Buffer either way).
  const undo = (await q(
    'SELECT u.import_seq, u.metric, u.added, u.updated FROM climate_import_undo u JOIN climate_imports i ON i.seq = u.import_seq WHERE i.cycle_id = ? ORDER BY u.import_seq, u.metric',
  )) as { import_seq: number; metric: string; added: Buffer; updated: Buffer }[];
  return {
    readings: await q('SELECT metric, at_utc, value, import_id, fixed_id FROM climate_readings WHERE cycle_id = ? ORDER BY at_utc, metric'),
    imports: await q('SELECT id, status FROM climate_imports WHERE cycle_id = ? ORDER BY id'),
    undo: undo.map((u) => ({ ...u, added: Buffer.from(u.added).toString('hex'), updated: Buffer.from(u.updated).toString('hex') })),
  };
}
