import { LEVELS, type Level } from './levels.js';

type Row = Record<string, any>;

/** The JSON shape of a registry record: its id under its own name, its parents' ids, its fields. */
export function presentLevel(level: Level, row: Row): Row {
  const out: Row = { organization_id: row.organization_id };
  for (const p of level.parentIds) out[p] = row[p];
  out[level.idName] = row.id;
  for (const f of Object.keys(level.fields)) out[f] = row[f] ?? null;
  out.created_at = row.created_at;
  out.updated_at = row.updated_at;
  out.version = row.version;
  return out;
}

export function presentTree(org: Row, farms: Row[], greenhouses: Row[], rows: Row[], cycles: Row[]): Row {
  const group = (items: Row[], key: string) => {
    const m = new Map<string, Row[]>();
    for (const it of items) {
      const list = m.get(it[key]);
      if (list) list.push(it);
      else m.set(it[key], [it]);
    }
    return m;
  };
  const cyclesByRow = group(cycles, 'row_id');
  const rowsByGh = group(rows, 'greenhouse_id');
  const ghByFarm = group(greenhouses, 'farm_id');
  return {
    organization_id: org.id,
    name: org.name,
    created_at: org.created_at,
    updated_at: org.updated_at,
    version: org.version,
    farms: farms.map((f) => ({
      ...presentLevel(LEVELS.farm, f),
      greenhouses: (ghByFarm.get(f.id) ?? []).map((g) => ({
        ...presentLevel(LEVELS.greenhouse, g),
        rows: (rowsByGh.get(g.id) ?? []).map((r) => ({
          ...presentLevel(LEVELS.row, r),
          cycles: (cyclesByRow.get(r.id) ?? []).map((c) => presentLevel(LEVELS.cycle, c)),
        })),
      })),
    })),
  };
}
