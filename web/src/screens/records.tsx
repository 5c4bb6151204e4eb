// Records of a crop cycle: harvests (and a harvest CSV), irrigation, fruit mass, truss counts on the
// tagged plants (a grid quick to fill on a phone), and the week note.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, get, upload, type Paged } from '../api';
import { navigate, useLocation } from '../router';
import { apiPath } from '../tree';
import { useSession } from '../session';
import { bodySchema, validate } from '../schema';
import { thisWeek, todayIn, weekName } from '../weeks';
import {
  bodyOf,
  Field,
  fmtInstant,
  fmtNumber,
  Form,
  Input,
  Loading,
  Pager,
  ProblemBox,
  ProgressBar,
  useForm,
  useLoad,
  type FieldDef,
} from '../ui';
import { cycleIds, Crumbs, WithPlace, type Ids } from './common';

const TABS = [
  ['harvests', 'Harvest'],
  ['irrigation', 'Irrigation'],
  ['fruit-mass', 'Fruit mass'],
  ['trusses', 'Truss count'],
  ['note', 'Week note'],
] as const;
type Tab = (typeof TABS)[number][0];

interface Harvest {
  harvest_id: string;
  week: string;
  kg: number;
  note: string | null;
  harvested_on: string | null;
}

const HARVEST_FIELDS: FieldDef[] = [
  { name: 'week', label: 'Week', kind: 'week', required: true },
  { name: 'harvested_on', label: 'Picked on', kind: 'date', hint: 'Optional: the day, inside the week.' },
  { name: 'kg', label: 'Harvested', kind: 'number', unit: 'kg', required: true },
  { name: 'note', label: 'Note', kind: 'text' },
];

function HarvestRow({ h, url, onChange }: { h: Harvest; url: string; onChange: () => void }) {
  const [editing, setEditing] = useState(false);
  const fields = HARVEST_FIELDS.filter((f) => f.name !== 'week');
  const initial = { harvested_on: h.harvested_on ?? '', kg: String(h.kg), note: h.note ?? '' };
  const form = useForm(
    'update_harvest',
    initial,
    fields.map((f) => f.name),
  );
  const [problem, setProblem] = useState<ApiError>();
  return (
    <li>
      <div class="row-line">
        <span>
          <strong>{fmtNumber(h.kg, 2)} kg</strong> · {h.harvested_on ?? weekName(h.week)}
          {h.note ? ` · ${h.note}` : ''}
        </span>
        <span class="row-actions">
          <button type="button" onClick={() => setEditing(!editing)} aria-expanded={editing}>
            {editing ? 'Close' : 'Edit'}
          </button>
          <button
            type="button"
            class="danger"
            onClick={async () => {
              if (!confirm(`Delete the harvest of ${h.kg} kg?`)) return;
              try {
                await api('DELETE', `${url}/harvests/${h.harvest_id}`);
                onChange();
              } catch (err) {
                setProblem(err as ApiError);
              }
            }}
          >
            Delete
          </button>
        </span>
      </div>
      <ProblemBox problem={problem} />
      {editing ? (
        <Form
          form={form}
          fields={fields}
          submitLabel="Save"
          onSubmit={() => {
            const body = bodyOf(fields, form.values, initial);
            if (!Object.keys(body).length) return setEditing(false);
            void form.submit(async () => {
              await api('PATCH', `${url}/harvests/${h.harvest_id}`, { json: body });
              setEditing(false);
              onChange();
            }, body);
          }}
        />
      ) : null}
    </li>
  );
}

function HarvestCsv({ url, onDone }: { url: string; onDone: () => void }) {
  const [file, setFile] = useState<File>();
  const [share, setShare] = useState<number>();
  const [problem, setProblem] = useState<ApiError>();
  const [stored, setStored] = useState<number>();
  return (
    <details class="edit">
      <summary>Import harvests from a CSV file</summary>
      <form
        class="form"
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          if (!file) return setProblem(new ApiError(422, 'validation_failed', 'Choose a CSV file first.'));
          setProblem(undefined);
          setStored(undefined);
          const form = new FormData();
          form.append('file', file, file.name);
          setShare(0);
          try {
            const r = await upload<{ count: number }>(`${url}/harvests/csv`, form, setShare).done;
            setStored(r.count);
            onDone();
          } catch (err) {
            setProblem(err as ApiError);
          } finally {
            setShare(undefined);
          }
        }}
      >
        <p class="hint">
          A header line week,kg (and note if you like), then one harvest per line, e.g. 2026-W07,412.5. Semicolons and decimal commas are
          fine.
        </p>
        <Field id="harvest-csv" label="CSV file">
          <input
            id="harvest-csv"
            type="file"
            accept=".csv,text/csv,text/plain"
            class="file"
            onChange={(e) => setFile(e.currentTarget.files?.[0])}
          />
        </Field>
        {share !== undefined ? <ProgressBar label="Sending" share={share} /> : null}
        <ProblemBox problem={problem} />
        {stored !== undefined ? <p role="status">{stored === 1 ? '1 harvest' : `${stored} harvests`} stored.</p> : null}
        <div class="actions">
          <button type="submit" class="primary" disabled={share !== undefined}>
            Import
          </button>
        </div>
      </form>
    </details>
  );
}

function Harvests({ url, zone }: { url: string; zone: string }) {
  const week = thisWeek(zone);
  const [listWeek, setListWeek] = useState(week);
  const [offset, setOffset] = useState(0);
  const limit = 20;
  const list = useLoad(
    (s) => get<Paged<Harvest>>(`${url}/harvests`, { week: listWeek || undefined, limit, offset }, s),
    [url, listWeek, offset],
  );
  const form = useForm(
    'create_harvest',
    { week },
    HARVEST_FIELDS.map((f) => f.name),
  );
  return (
    <>
      <h2>Record a harvest</h2>
      <Form
        form={form}
        fields={HARVEST_FIELDS}
        submitLabel="Save the harvest"
        onSubmit={() => {
          const body = bodyOf(HARVEST_FIELDS, form.values, undefined);
          void form.submit(async () => {
            const h = await api<Harvest>('POST', `${url}/harvests`, { json: body });
            form.setAll({ week: form.values.week ?? week });
            setListWeek(h.week);
            setOffset(0);
            list.reload();
          }, body);
        }}
      />
      <HarvestCsv url={url} onDone={() => (setListWeek(''), list.reload())} />
      <h2>Harvests {listWeek ? `of ${weekName(listWeek)}` : '(every week)'}</h2>
      <div class="inline-fields">
        <Field id="harvest-list-week" label="Week shown">
          <Input
            def={{ name: 'list_week', label: 'Week', kind: 'week' }}
            id="harvest-list-week"
            value={listWeek}
            onValue={(v) => (setListWeek(v), setOffset(0))}
          />
        </Field>
        <button type="button" onClick={() => (setListWeek(''), setOffset(0))}>
          Every week
        </button>
      </div>
      {list.error ? <ProblemBox problem={list.error} /> : null}
      {list.data ? (
        list.data.total ? (
          <>
            <p>
              {list.data.total} harvests,{' '}
              {fmtNumber(
                list.data.items.reduce((s, h) => s + h.kg, 0),
                2,
              )}{' '}
              kg on this page.
            </p>
            <ul class="list harvests">
              {list.data.items.map((h) => (
                <HarvestRow key={h.harvest_id} h={h} url={url} onChange={list.reload} />
              ))}
            </ul>
            <Pager offset={offset} limit={limit} total={list.data.total} onPage={setOffset} what="harvests" />
          </>
        ) : (
          <p class="empty">No harvest recorded{listWeek ? ' this week' : ''}.</p>
        )
      ) : (
        <Loading />
      )}
    </>
  );
}

const IRRIGATION_FIELDS: FieldDef[] = [
  { name: 'at', label: 'When', kind: 'datetime', required: true, hint: 'On the greenhouse clock.' },
  { name: 'volume_l', label: 'Water given', kind: 'number', unit: 'L' },
  { name: 'drain_l', label: 'Drain', kind: 'number', unit: 'L' },
  { name: 'ec_in', label: 'EC given', kind: 'number', unit: 'mS/cm' },
  { name: 'ec_drain', label: 'EC drain', kind: 'number', unit: 'mS/cm' },
  { name: 'ph_in', label: 'pH given', kind: 'number' },
  { name: 'ph_drain', label: 'pH drain', kind: 'number' },
  { name: 'duration_min', label: 'Duration', kind: 'number', unit: 'min' },
  { name: 'note', label: 'Note' },
];

interface Irrigation {
  entry_id: string;
  at: string;
  volume_l: number | null;
  drain_l: number | null;
  ec_in: number | null;
  ec_drain: number | null;
  ph_in: number | null;
  ph_drain: number | null;
  duration_min: number | null;
  note: string | null;
}

function nowLocal(zone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date());
  const v = (t: string) => parts.find((p) => p.type === t)!.value;
  return `${v('year')}-${v('month')}-${v('day')}T${v('hour')}:${v('minute')}`;
}

function IrrigationTab({ url, zone }: { url: string; zone: string }) {
  const [offset, setOffset] = useState(0);
  const limit = 20;
  const list = useLoad((s) => get<Paged<Irrigation>>(`${url}/irrigation`, { limit, offset }, s), [url, offset]);
  const form = useForm(
    'create_irrigation_entry',
    { at: nowLocal(zone) },
    IRRIGATION_FIELDS.map((f) => f.name),
  );
  const [problem, setProblem] = useState<ApiError>();
  return (
    <>
      <h2>Log irrigation</h2>
      <Form
        form={form}
        fields={IRRIGATION_FIELDS}
        class="form grid-form"
        submitLabel="Save the entry"
        onSubmit={() => {
          const body = bodyOf(IRRIGATION_FIELDS, form.values, undefined);
          void form.submit(async () => {
            await api('POST', `${url}/irrigation`, { json: body });
            form.setAll({ at: nowLocal(zone) });
            setOffset(0);
            list.reload();
          }, body);
        }}
      />
      <h2>Entries, newest first</h2>
      <ProblemBox problem={problem ?? list.error} />
      {list.data ? (
        list.data.total ? (
          <>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Given (L)</th>
                    <th scope="col">Drain (L)</th>
                    <th scope="col">EC in/drain</th>
                    <th scope="col">pH in/drain</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.data.items.map((e) => (
                    <tr key={e.entry_id}>
                      <td>{fmtInstant(e.at)}</td>
                      <td>{fmtNumber(e.volume_l)}</td>
                      <td>{fmtNumber(e.drain_l)}</td>
                      <td>
                        {fmtNumber(e.ec_in)} / {fmtNumber(e.ec_drain)}
                      </td>
                      <td>
                        {fmtNumber(e.ph_in)} / {fmtNumber(e.ph_drain)}
                      </td>
                      <td>
                        <button
                          type="button"
                          class="danger small"
                          aria-label={`Delete the entry of ${fmtInstant(e.at)}`}
                          onClick={async () => {
                            if (!confirm('Delete this irrigation entry?')) return;
                            try {
                              await api('DELETE', `${url}/irrigation/${e.entry_id}`);
                              list.reload();
                            } catch (err) {
                              setProblem(err as ApiError);
                            }
                          }}
                        >
                          Delete
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager offset={offset} limit={limit} total={list.data.total} onPage={setOffset} what="irrigation entries" />
          </>
        ) : (
          <p class="empty">No irrigation logged yet.</p>
        )
      ) : (
        <Loading />
      )}
    </>
  );
}

const MASS_FIELDS: FieldDef[] = [
  { name: 'week', label: 'From week', kind: 'week' },
  { name: 'green_g', label: 'Green fruit', kind: 'number', unit: 'g', required: true },
  { name: 'turning_g', label: 'Turning fruit', kind: 'number', unit: 'g', required: true },
  { name: 'red_g', label: 'Red fruit', kind: 'number', unit: 'g', required: true },
];

interface Mass {
  week: string;
  green_g: number;
  turning_g: number;
  red_g: number;
}

function FruitMass({ url, zone }: { url: string; zone: string }) {
  const list = useLoad((s) => get<Paged<Mass> & { in_force: Mass | null }>(`${url}/fruit-mass`, {}, s), [url]);
  const form = useForm(
    'save_fruit_mass',
    { week: thisWeek(zone) },
    MASS_FIELDS.map((f) => f.name),
  );
  return (
    <>
      <h2>Mean fruit mass</h2>
      {list.data?.in_force ? (
        <p>
          In force now (since {weekName(list.data.in_force.week)}): green {list.data.in_force.green_g} g, turning{' '}
          {list.data.in_force.turning_g} g, red {list.data.in_force.red_g} g.
        </p>
      ) : list.data ? (
        <p class="empty">No fruit mass saved yet: weigh a sample of each class.</p>
      ) : null}
      <Form
        form={form}
        fields={MASS_FIELDS}
        class="form grid-form"
        submitLabel="Save the fruit mass"
        onSubmit={() => {
          const body = bodyOf(MASS_FIELDS, form.values, undefined);
          void form.submit(async () => {
            await api('POST', `${url}/fruit-mass`, { json: body });
            list.reload();
          }, body);
        }}
      />
      {list.data?.items.length ? (
        <>
          <h3>History</h3>
          <ul class="list">
            {[...list.data.items].reverse().map((m) => (
              <li key={m.week}>
                From {weekName(m.week)}: {m.green_g} / {m.turning_g} / {m.red_g} g
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

interface TrussCount {
  counted_on: string;
  week: string;
  rows: { plant: string; truss: number; fruits: number; flowers: number | null }[];
  figures: {
    plants: number;
    trusses: number;
    fruits: number;
    fruit_per_truss: number;
    trusses_per_plant: number;
    fruit_per_m2: number | null;
    fruit_per_m2_reason: string | null;
  };
}

/** The count grid: one line per tagged plant, one box per truss; only filled boxes are saved. */
function TrussGrid({ url, zone, last, onSaved }: { url: string; zone: string; last?: TrussCount; onSaved: () => void }) {
  const lastPlants = last ? [...new Set(last.rows.map((r) => r.plant))] : [];
  const lastTrusses = last ? Math.max(...last.rows.map((r) => r.truss)) : 0;
  const [date, setDate] = useState(todayIn(zone));
  const [plants, setPlants] = useState<string[]>(lastPlants.length ? lastPlants : ['1', '2', '3', '4', '5']);
  const [trusses, setTrusses] = useState(Math.max(lastTrusses, 4));
  const [cells, setCells] = useState<Record<string, string>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<ApiError | { detail: string }>();
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState<string>();
  const key = (p: number, t: number) => `${p}:${t}`;

  const save = async () => {
    setProblem(undefined);
    setSaved(undefined);
    const order: string[] = [];
    const rows: { plant: string; truss: number; fruits: number | string }[] = [];
    plants.forEach((plant, p) => {
      for (let t = 1; t <= trusses; t++) {
        const raw = (cells[key(p, t)] ?? '').trim();
        if (raw === '') continue;
        order.push(key(p, t));
        rows.push({ plant: plant.trim(), truss: t, fruits: /^\d+$/.test(raw) ? Number(raw) : raw });
      }
    });
    const body = { counted_on: date, rows };
    const place = (problems: { name: string; message: string }[]) => {
      const at: Record<string, string> = {};
      const rest: string[] = [];
      for (const pr of problems) {
        const m = /^rows\.(\d+)(?:\.(\w+))?$/.exec(pr.name);
        if (m && order[Number(m[1])]) at[order[Number(m[1])]!] = `${m[2] ?? 'row'} ${pr.message}`;
        else if (pr.name === 'counted_on') at.date = pr.message;
        else rest.push(`${pr.name === 'rows' ? 'The grid' : pr.name} ${pr.message}`);
      }
      setErrors(at);
      if (rest.length || !Object.keys(at).length) setProblem({ detail: rest.join('; ') || 'Please check the boxes marked in red.' });
    };
    if (!rows.length) return place([{ name: 'rows', message: 'is empty: type the fruit on at least one truss.' }]);
    const local = validate(await bodySchema('save_truss_count'), body);
    if (local.length) return place(local);
    setBusy(true);
    try {
      await api('PUT', `${url}/truss-counts`, { json: body });
      setErrors({});
      setSaved(`Saved ${rows.length} trusses for ${date}.`);
      onSaved();
    } catch (err) {
      const e = err as ApiError;
      if (e.status === 422 && e.errors.length) place(e.errors);
      else setProblem(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <div class="inline-fields">
        <Field id="truss-date" label="Counted on" error={errors.date}>
          <Input
            def={{ name: 'counted_on', label: 'Counted on', kind: 'date' }}
            id="truss-date"
            value={date}
            error={errors.date}
            onValue={setDate}
          />
        </Field>
        <Field id="truss-n" label="Trusses per plant">
          <input
            id="truss-n"
            type="number"
            min={1}
            max={40}
            value={trusses}
            onInput={(e) => setTrusses(Math.min(40, Math.max(1, Number(e.currentTarget.value) || 1)))}
          />
        </Field>
      </div>
      <p class="hint">Fruit set on each truss, counted from the bottom. Leave a box empty when that truss was not counted.</p>
      <div class="table-wrap">
        <table class="truss-grid">
          <caption class="sr-only">Fruit per truss of each tagged plant</caption>
          <thead>
            <tr>
              <th scope="col">Plant</th>
              {Array.from({ length: trusses }, (_, i) => (
                <th scope="col" key={i}>
                  T{i + 1}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {plants.map((plant, p) => (
              <tr key={p}>
                <th scope="row">
                  <input
                    class="plant-tag"
                    aria-label={`Tag of plant ${p + 1}`}
                    value={plant}
                    onInput={(e) => {
                      const v = e.currentTarget.value;
                      setPlants((ps) => ps.map((x, i) => (i === p ? v : x)));
                    }}
                  />
                </th>
                {Array.from({ length: trusses }, (_, i) => {
                  const k = key(p, i + 1);
                  return (
                    <td key={k} class={errors[k] ? 'has-error' : ''}>
                      <input
                        inputMode="numeric"
                        aria-label={`Plant ${plant}, truss ${i + 1}: fruit`}
                        aria-invalid={errors[k] ? true : undefined}
                        title={errors[k]}
                        value={cells[k] ?? ''}
                        onInput={(e) => {
                          const v = e.currentTarget.value;
                          setCells((c) => ({ ...c, [k]: v }));
                        }}
                      />
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {Object.values(errors).filter(Boolean).length ? (
        <ul class="error" role="alert">
          {Object.entries(errors)
            .filter(([k, v]) => v && k !== 'date')
            .map(([k, v]) => {
              const [p, t] = k.split(':');
              return <li key={k}>{`Plant ${plants[Number(p)]}, truss ${t}: ${v}`}</li>;
            })}
        </ul>
      ) : null}
      <div class="actions">
        <button type="button" onClick={() => setPlants((ps) => [...ps, String(ps.length + 1)])}>
          Add a plant
        </button>
        {plants.length > 1 ? (
          <button type="button" onClick={() => setPlants((ps) => ps.slice(0, -1))}>
            Remove the last plant
          </button>
        ) : null}
      </div>
      <ProblemBox problem={problem} />
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save the count'}
        </button>
        {saved ? <span role="status">{saved}</span> : null}
      </div>
    </form>
  );
}

function Trusses({ url, zone }: { url: string; zone: string }) {
  const [offset, setOffset] = useState(0);
  const limit = 5;
  const list = useLoad((s) => get<Paged<TrussCount>>(`${url}/truss-counts`, { limit, offset }, s), [url, offset]);
  const [problem, setProblem] = useState<ApiError>();
  return (
    <>
      <h2>Truss count</h2>
      {/* Mounted once the first page is read, and kept: its plants and trusses start as the last count's. */}
      {list.data || list.error ? (
        <TrussGrid url={url} zone={zone} last={list.data?.items[0]} onSaved={() => (setOffset(0), list.reload())} />
      ) : (
        <Loading />
      )}
      <h2>Counts, newest first</h2>
      <ProblemBox problem={problem ?? list.error} />
      {list.data?.items.length ? (
        <>
          <ul class="list">
            {list.data.items.map((c) => (
              <li key={c.counted_on} class="row-line">
                <span>
                  <strong>{c.counted_on}</strong> · {c.figures.plants} plants, {c.figures.trusses} trusses ·{' '}
                  {fmtNumber(c.figures.fruit_per_truss, 2)} fruit/truss
                  {c.figures.fruit_per_m2 !== null ? ` · ${fmtNumber(c.figures.fruit_per_m2)} fruit/m²` : ''}
                </span>
                <button
                  type="button"
                  class="danger small"
                  onClick={async () => {
                    if (!confirm(`Delete the count of ${c.counted_on}?`)) return;
                    try {
                      await api('DELETE', `${url}/truss-counts/${c.counted_on}`);
                      list.reload();
                    } catch (err) {
                      setProblem(err as ApiError);
                    }
                  }}
                >
                  Delete
                </button>
              </li>
            ))}
          </ul>
          <Pager offset={offset} limit={limit} total={list.data.total} onPage={setOffset} what="truss counts" />
        </>
      ) : list.data ? (
        <p class="empty">No truss count yet.</p>
      ) : null}
    </>
  );
}

function WeekNote({ url, zone }: { url: string; zone: string }) {
  const [week, setWeek] = useState(thisWeek(zone));
  const form = useForm('save_week', { text: '' }, ['text', 'week']);
  const read = useLoad(
    (s) =>
      /^\d{4}-W\d{2}$/.test(week) ? get<{ note: { text?: string } | null }>(`${url}/weeks/${week}`, {}, s) : Promise.resolve(undefined),
    [url, week],
  );
  // The saved note fills the box when it arrives, unless something was typed meanwhile: that stays.
  const typed = useRef(false);
  useEffect(() => {
    typed.current = false;
  }, [week]);
  useEffect(() => {
    if (read.data && !typed.current) form.setAll({ text: typeof read.data.note?.text === 'string' ? read.data.note.text : '' });
  }, [read.data]);
  return (
    <>
      <h2>Week note</h2>
      <Field id="note-week" label="Week" error={form.errors.week}>
        <Input def={{ name: 'week', label: 'Week', kind: 'week' }} id="note-week" value={week} onValue={setWeek} />
      </Field>
      <Form
        form={{ ...form, set: (n: string, v: string) => ((typed.current = true), form.set(n, v)) }}
        fields={[{ name: 'text', label: `What happened in ${weekName(week)}`, kind: 'textarea' }]}
        submitLabel="Save the note"
        onSubmit={() => {
          const body = { text: form.values.text ?? '' };
          if (!/^\d{4}-W\d{2}$/.test(week))
            return void form.submit(() =>
              Promise.reject(new ApiError(422, 'validation_failed', 'Choose a week first.', [{ name: 'week', message: 'is required' }])),
            );
          void form.submit(() => api('POST', `${url}/weeks/${week}`, { json: body }), body);
        }}
      />
    </>
  );
}

export function RecordsScreen({ ids }: { ids: Ids }) {
  const { organization_id: org } = useSession();
  const { search, path } = useLocation();
  const tab = (TABS.find(([t]) => t === search.get('tab'))?.[0] ?? 'harvests') as Tab;
  return (
    <WithPlace ids={ids} need="cycle">
      {(place) => {
        const at = cycleIds(place);
        const url = apiPath.cycle(org, at.farm, at.greenhouse, at.row, at.cycle);
        const zone = place.greenhouse!.time_zone;
        return (
          <section>
            <Crumbs place={place} />
            <h1>Records</h1>
            <nav class="tabs" aria-label="Records">
              {TABS.map(([t, label]) => (
                <a
                  key={t}
                  href={`${path}?tab=${t}`}
                  aria-current={t === tab ? 'page' : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(`${path}?tab=${t}`, true);
                  }}
                >
                  {label}
                </a>
              ))}
            </nav>
            {tab === 'harvests' ? <Harvests url={url} zone={zone} /> : null}
            {tab === 'irrigation' ? <IrrigationTab url={url} zone={zone} /> : null}
            {tab === 'fruit-mass' ? <FruitMass url={url} zone={zone} /> : null}
            {tab === 'trusses' ? <Trusses url={url} zone={zone} /> : null}
            {tab === 'note' ? <WeekNote url={url} zone={zone} /> : null}
          </section>
        );
      }}
    </WithPlace>
  );
}
