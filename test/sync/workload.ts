import { dbRows, type TestServer } from '../helpers/server.js';
import type { Tree } from '../helpers/server.js';
import { climateCsv, form } from '../climate/imports/helpers.js';

/**
 * A seeded random workload over three instances of one organization (an upstream and two
 * boxes), recording every write that was acknowledged (answered 2xx) with the version it
 * answered, so that what every side must hold once the faults heal can be worked out from
 * the acknowledgements alone: the oracle.
 */

export type Instance = { name: string; server: TestServer };

interface Ack {
  version: string;
  at: Instance['name'];
}

/** Per record, every acknowledged write: values with their versions, and deletes. */
export class Oracle {
  /** harvest id → writes of kg; deletes. */
  readonly harvests = new Map<string, { writes: (Ack & { kg: number })[]; deleted: boolean }>();
  readonly irrigation = new Map<string, { writes: (Ack & { volume_l: number })[]; deleted: boolean }>();
  /** field of a registry record → writes. */
  readonly fields = new Map<string, (Ack & { value: unknown })[]>();
  /** fruit mass per week → saves. */
  readonly fruitMass = new Map<string, (Ack & { red_g: number })[]>();
  readonly weekNotes = new Map<string, (Ack & { body: unknown })[]>();
  readonly trussCounts = new Map<string, (Ack & { fruits: number[] })[]>();
  /** climate reading (metric|instant) → writes; value null for a delete. */
  readonly readings = new Map<string, (Ack & { value: number | null })[]>();
  readonly keys = new Map<string, { names: (Ack & { name: string })[]; revoked: boolean }>();
  /** Every acknowledged write, for the record of a failed run. */
  readonly log: string[] = [];
}

const WEEKS = ['2026-W10', '2026-W11'];
const DATES = ['2026-03-04', '2026-03-11'];
const INSTANTS = ['2026-03-02T10:00:00Z', '2026-03-02T11:00:00Z', '2026-03-02T12:00:00Z'];

export class Workload {
  readonly oracle = new Oracle();
  private imports = 0;

  constructor(
    private readonly random: () => number,
    private readonly tree: Tree,
    readonly key: string,
  ) {}

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.random() * xs.length)]!;
  }

  private int(lo: number, hi: number): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }

  private async send(i: Instance, method: string, url: string, body?: unknown, raw?: FormData) {
    const r = await i.server.request(method, url, { key: this.key, ...(body !== undefined ? { body } : {}), ...(raw ? { raw } : {}) });
    if (r.status >= 500) throw new Error(`${i.name} ${method} ${url}: ${r.status} ${r.text}`);
    return r;
  }

  private ack(i: Instance, what: string, version: string): void {
    this.oracle.log.push(`${i.name} ${what} @${version}`);
  }

  /** One random write on one instance; a refusal (a record that has not reached it yet) is no acknowledgement. */
  async write(i: Instance): Promise<void> {
    const C = this.tree.cyclePath;
    const o = this.oracle;
    const roll = this.random();
    if (roll < 0.14) {
      const kg = this.int(1, 500) / 10;
      const r = await this.send(i, 'POST', `${C}/harvests`, { week: this.pick(WEEKS), kg });
      if (r.status !== 201) throw new Error(`harvest: ${r.status} ${r.text}`);
      o.harvests.set(r.body.harvest_id, { writes: [{ version: r.body.version, at: i.name, kg }], deleted: false });
      this.ack(i, `harvest ${r.body.harvest_id} kg=${kg}`, r.body.version);
    } else if (roll < 0.24) {
      const ids = [...o.harvests.keys()];
      if (!ids.length) return;
      const id = this.pick(ids);
      if (this.random() < 0.25) {
        const r = await this.send(i, 'DELETE', `${C}/harvests/${id}`);
        if (r.status === 200) {
          o.harvests.get(id)!.deleted = true;
          this.ack(i, `delete harvest ${id}`, '');
        }
      } else {
        const kg = this.int(1, 500) / 10;
        const r = await this.send(i, 'PATCH', `${C}/harvests/${id}`, { kg });
        if (r.status === 200) {
          o.harvests.get(id)!.writes.push({ version: r.body.version, at: i.name, kg });
          this.ack(i, `harvest ${id} kg=${kg}`, r.body.version);
        }
      }
    } else if (roll < 0.32) {
      const volume_l = this.int(10, 900);
      const r = await this.send(i, 'POST', `${C}/irrigation`, { at: '2026-03-02T07:30:00Z', volume_l });
      if (r.status !== 201) throw new Error(`irrigation: ${r.status} ${r.text}`);
      o.irrigation.set(r.body.entry_id, { writes: [{ version: r.body.version, at: i.name, volume_l }], deleted: false });
      this.ack(i, `irrigation ${r.body.entry_id} ${volume_l}`, r.body.version);
    } else if (roll < 0.38) {
      const ids = [...o.irrigation.keys()];
      if (!ids.length) return;
      const id = this.pick(ids);
      if (this.random() < 0.3) {
        const r = await this.send(i, 'DELETE', `${C}/irrigation/${id}`);
        if (r.status === 200) o.irrigation.get(id)!.deleted = true;
      } else {
        const volume_l = this.int(10, 900);
        const r = await this.send(i, 'PATCH', `${C}/irrigation/${id}`, { volume_l });
        if (r.status === 200) o.irrigation.get(id)!.writes.push({ version: r.body.version, at: i.name, volume_l });
      }
    } else if (roll < 0.46) {
      // Registry fields: the farm's notes, the greenhouse's name (last writer wins, field by field).
      const which = this.random() < 0.5;
      const url = which ? `/api/organizations/${this.tree.orgId}/farms/${this.tree.farmId}` : this.tree.greenhousePath;
      const field = which ? 'notes' : 'name';
      const value = `${i.name}-${this.int(0, 9999)}`;
      const r = await this.send(i, 'PATCH', url, { [field]: value });
      if (r.status !== 200) throw new Error(`registry: ${r.status} ${r.text}`);
      const k = `${which ? 'farm' : 'greenhouse'}.${field}`;
      o.fields.set(k, [...(o.fields.get(k) ?? []), { version: r.body.version, at: i.name, value }]);
      this.ack(i, `${k}=${value}`, r.body.version);
    } else if (roll < 0.54) {
      const week = this.pick(WEEKS);
      const red_g = this.int(50, 300);
      const r = await this.send(i, 'POST', `${C}/fruit-mass`, { week, green_g: 80, turning_g: 100, red_g });
      if (r.status !== 200) throw new Error(`fruit mass: ${r.status} ${r.text}`);
      o.fruitMass.set(week, [...(o.fruitMass.get(week) ?? []), { version: r.body.version, at: i.name, red_g }]);
      this.ack(i, `fruit mass ${week} red=${red_g}`, r.body.version);
    } else if (roll < 0.6) {
      const week = this.pick(WEEKS);
      const body = { by: i.name, n: this.int(0, 999) };
      const r = await this.send(i, 'POST', `${C}/weeks/${week}`, body);
      if (r.status !== 201) throw new Error(`week note: ${r.status} ${r.text}`);
      o.weekNotes.set(week, [...(o.weekNotes.get(week) ?? []), { version: r.body.version, at: i.name, body }]);
    } else if (roll < 0.66) {
      const date = this.pick(DATES);
      const fruits = [this.int(0, 9), this.int(0, 9)];
      const r = await this.send(i, 'PUT', `${C}/truss-counts`, {
        counted_on: date,
        rows: fruits.map((f, n) => ({ plant: `P${n}`, truss: 1, fruits: f })),
      });
      if (r.status !== 200) throw new Error(`truss count: ${r.status} ${r.text}`);
      o.trussCounts.set(date, [...(o.trussCounts.get(date) ?? []), { version: r.body.version, at: i.name, fruits }]);
    } else if (roll < 0.76) {
      const at = this.pick(INSTANTS);
      const k = `air_temperature|${at}`;
      if (this.random() < 0.25) {
        const list = await this.send(i, 'GET', `${C}/climate?metric=air_temperature&from=${at}&to=${at}`);
        const p = list.body.items?.[0];
        if (!p || p.source !== 'manual') return;
        const r = await this.send(i, 'DELETE', `${C}/climate/${p.point_id}`);
        if (r.status !== 200) return;
        // The answer has no version for a delete: the change log has it.
        const [logged] = await dbRows<{ version: string }>(
          i.server,
          "SELECT version FROM change_log WHERE entity = 'climate_readings' AND entity_id = ? AND op = 'delete' AND origin IS NULL ORDER BY seq DESC LIMIT 1",
          p.point_id,
        );
        if (!logged) throw new Error(`the delete of reading ${p.point_id} is not in the change log`);
        o.readings.set(k, [...(o.readings.get(k) ?? []), { version: logged.version, at: i.name, value: null }]);
        this.ack(i, `delete reading ${k}`, logged.version);
        return;
      }
      const value = this.int(100, 300) / 10;
      const r = await this.send(i, 'POST', `${C}/climate`, { points: [{ metric: 'air_temperature', value, at }] });
      if (r.status !== 200) throw new Error(`climate: ${r.status} ${r.text}`);
      const item = r.body.items?.[0];
      if (item) {
        o.readings.set(k, [...(o.readings.get(k) ?? []), { version: item.version, at: i.name, value: item.value }]);
        this.ack(i, `reading ${k}=${item.value}`, item.version);
      }
    } else if (roll < 0.82) {
      const keys = [...o.keys.keys()];
      if (!keys.length || this.random() < 0.3) {
        if (i.name !== 'up') return;
        const r = await this.send(i, 'POST', `/api/organizations/${this.tree.orgId}/keys`, { name: 'staff', role: 'member' });
        if (r.status !== 201) throw new Error(`key: ${r.status} ${r.text}`);
        o.keys.set(r.body.key_id, { names: [{ version: r.body.version, at: i.name, name: 'staff' }], revoked: false });
        return;
      }
      const id = this.pick(keys);
      if (this.random() < 0.3) {
        const r = await this.send(i, 'POST', `/api/organizations/${this.tree.orgId}/keys/${id}/revoke`);
        if (r.status === 200) o.keys.get(id)!.revoked = true;
      } else {
        const name = `${i.name}-key-${this.int(0, 999)}`;
        const r = await this.send(i, 'PATCH', `/api/organizations/${this.tree.orgId}/keys/${id}`, { name });
        if (r.status === 200) o.keys.get(id)!.names.push({ version: r.body.version, at: i.name, name });
      }
    } else if (roll < 0.9) {
      // A climate import of a day of its own (never the typed instants), sometimes undone later.
      if (i.name === 'up') return;
      const day = 10 + (this.imports++ % 15);
      const csv = climateCsv(12, { start: `2026-03-${String(day).padStart(2, '0')}T00:00`, temperature: () => 60 + this.int(0, 20) });
      const r = await i.server.request('POST', `${C}/climate/csv`, { key: this.key, raw: form(csv, `day-${day}.csv`) });
      if (r.status !== 200) throw new Error(`climate import: ${r.status} ${r.text}`);
    } else {
      const list = await this.send(i, 'GET', `${C}/climate/imports`);
      const done: { id: string }[] = (list.body.items ?? []).filter((x: any) => x.status === 'done');
      if (!done.length) return;
      await this.send(i, 'POST', `${C}/climate/imports/${this.pick(done).id}/undo`, { confirm: true });
    }
  }
}

/** The write with the highest version wins (ties cannot happen: versions carry the node). */
export function winner<T extends { version: string }>(writes: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const w of writes) if (!best || w.version > best.version) best = w;
  return best;
}

/** What the oracle says every instance must hold, checked against one instance; answers the differences. */
export async function checkOracle(s: TestServer, w: Workload, tree: Tree): Promise<string[]> {
  const o = w.oracle;
  const key = w.key;
  const C = tree.cyclePath;
  const get = async (url: string) => {
    const r = await s.request('GET', url, { key });
    if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${r.text}`);
    return r.body;
  };
  const bad: string[] = [];
  const harvests = new Map((await get(`${C}/harvests?limit=500`)).items.map((h: any) => [h.harvest_id, h]));
  for (const [id, h] of o.harvests) {
    const held = harvests.get(id) as any;
    if (h.deleted) {
      if (held) bad.push(`harvest ${id} was deleted but is back (kg ${held.kg})`);
    } else if (!held) bad.push(`harvest ${id} is lost`);
    else if (held.kg !== winner(h.writes)!.kg) bad.push(`harvest ${id} kg ${held.kg}, the latest write says ${winner(h.writes)!.kg}`);
  }
  if (harvests.size !== [...o.harvests.values()].filter((h) => !h.deleted).length)
    bad.push(`harvests: ${harvests.size} held, ${[...o.harvests.values()].filter((h) => !h.deleted).length} expected`);
  const entries = new Map((await get(`${C}/irrigation?limit=500`)).items.map((e: any) => [e.entry_id, e]));
  for (const [id, e] of o.irrigation) {
    const held = entries.get(id) as any;
    if (e.deleted) {
      if (held) bad.push(`irrigation ${id} was deleted but is back`);
    } else if (!held) bad.push(`irrigation ${id} is lost`);
    else if (held.volume_l !== winner(e.writes)!.volume_l)
      bad.push(`irrigation ${id} volume ${held.volume_l}, the latest write says ${winner(e.writes)!.volume_l}`);
  }
  const farm = await get(`/api/organizations/${tree.orgId}/farms/${tree.farmId}`);
  const gh = await get(tree.greenhousePath);
  for (const [k, writes] of o.fields) {
    const [what, field] = k.split('.') as [string, string];
    const held = (what === 'farm' ? farm : gh)[field];
    if (held !== winner(writes)!.value) bad.push(`${k} is ${held}, the latest write says ${winner(writes)!.value}`);
  }
  const masses = (await get(`${C}/fruit-mass?limit=500`)).items;
  for (const [week, saves] of o.fruitMass) {
    const held = masses.filter((m: any) => m.week === week);
    if (held.length !== 1) bad.push(`fruit mass ${week}: ${held.length} entries`);
    else if (held[0].red_g !== winner(saves)!.red_g)
      bad.push(`fruit mass ${week} red ${held[0].red_g}, the latest save says ${winner(saves)!.red_g}`);
  }
  for (const [week, saves] of o.weekNotes) {
    const held = await get(`${C}/weeks/${week}`);
    if (JSON.stringify(held.note) !== JSON.stringify(winner(saves)!.body))
      bad.push(`week note ${week} is ${JSON.stringify(held.note)}, the latest save says ${JSON.stringify(winner(saves)!.body)}`);
  }
  const counts = (await get(`${C}/truss-counts`)).items;
  for (const [date, saves] of o.trussCounts) {
    const held = counts.filter((c: any) => c.counted_on === date);
    const want = winner(saves)!.fruits;
    if (held.length !== 1) bad.push(`truss count ${date}: ${held.length} entries`);
    else if (JSON.stringify(held[0].rows.map((r: any) => r.fruits)) !== JSON.stringify(want))
      bad.push(
        `truss count ${date}: ${JSON.stringify(held[0].rows.map((r: any) => r.fruits))}, the latest save says ${JSON.stringify(want)}`,
      );
  }
  for (const [k, writes] of o.readings) {
    const at = k.split('|')[1]!;
    const held = (await get(`${C}/climate?metric=air_temperature&from=${at}&to=${at}`)).items[0];
    const last = winner(writes)!;
    if (last.value === null) {
      if (held) bad.push(`reading ${k} was deleted last but is back (${held.value} @${held.version})`);
    } else if (!held) bad.push(`reading ${k} is lost (latest write ${last.value})`);
    else if (held.value !== last.value) bad.push(`reading ${k} is ${held.value}, the latest write says ${last.value}`);
  }
  const keys = new Map((await get(`/api/organizations/${tree.orgId}/keys`)).items.map((k: any) => [k.key_id, k]));
  for (const [id, k] of o.keys) {
    const held = keys.get(id) as any;
    if (!held) bad.push(`key ${id} is lost`);
    else {
      if (k.revoked && held.active) bad.push(`key ${id} was revoked but is active`);
      if (held.name !== winner(k.names)!.name) bad.push(`key ${id} is named ${held.name}, the latest rename says ${winner(k.names)!.name}`);
    }
  }
  return bad;
}
