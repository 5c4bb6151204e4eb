// Navigate and keep the registry: organization > farm > greenhouse > row > crop cycle; create and
// edit each level (a greenhouse's time zone and location, a cycle's densities and area).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { Link, navigate } from '../router';
import { pathOf } from '../routes';
import { apiPath, refreshTree, type Cycle, type Farm, type Greenhouse, type Row } from '../tree';
import { takesField } from '../schema';
import { useSession } from '../session';
import { bodyOf, Form, usePage, useForm, type FieldDef, type Values } from '../ui';
import { Crumbs, WithPlace, type Ids } from './common';

export const FARM_FIELDS: FieldDef[] = [
  { name: 'name', label: 'Name', required: true },
  { name: 'location', label: 'Place or address' },
  { name: 'notes', label: 'Notes', kind: 'textarea' },
];
export const GREENHOUSE_FIELDS: FieldDef[] = [
  { name: 'name', label: 'Name', required: true },
  {
    name: 'time_zone',
    label: 'Time zone',
    kind: 'zone',
    required: true,
    hint: 'The greenhouse clock, e.g. Europe/Amsterdam: weeks and days are counted on it.',
  },
  { name: 'latitude', label: 'Latitude', kind: 'number', unit: '° north', hint: 'With longitude, for the outdoor weather.' },
  { name: 'longitude', label: 'Longitude', kind: 'number', unit: '° east' },
  { name: 'area_m2', label: 'Growing area', kind: 'number', unit: 'm²' },
  { name: 'notes', label: 'Notes', kind: 'textarea' },
];
export const ROW_FIELDS: FieldDef[] = [
  { name: 'name', label: 'Name', required: true },
  { name: 'length_m', label: 'Length', kind: 'number', unit: 'm' },
  { name: 'plant_count', label: 'Plants in the row', kind: 'integer' },
  { name: 'notes', label: 'Notes', kind: 'textarea' },
];
const CYCLE_FIELDS: FieldDef[] = [
  { name: 'name', label: 'Name', required: true, hint: 'e.g. Tomato 2026' },
  { name: 'started_on', label: 'Planted on', kind: 'date', required: true },
  { name: 'ended_on', label: 'Cleared on', kind: 'date' },
  { name: 'crop', label: 'Crop', hint: 'e.g. tomato' },
  { name: 'variety', label: 'Variety', hint: 'e.g. Merlice' },
  { name: 'plants_per_m2', label: 'Plant density', kind: 'number', unit: 'plants/m²' },
  { name: 'stems_per_m2', label: 'Stem density', kind: 'number', unit: 'stems/m²' },
  { name: 'notes', label: 'Notes', kind: 'textarea' },
];
const AREA: FieldDef = {
  name: 'area_m2',
  label: 'Area the records cover',
  kind: 'number',
  unit: 'm²',
  hint: 'Left empty: plants in the row ÷ plant density.',
};

/** The cycle's fields, with its area once the API takes one (issue 35 adds area_m2). */
export function useCycleFields(cycle?: Cycle): FieldDef[] {
  const [withArea, setWithArea] = useState(cycle ? 'area_m2' in cycle : false);
  useEffect(() => {
    if (!withArea) void takesField('create_cycle', 'area_m2').then((has) => has && setWithArea(true));
  }, []);
  return withArea ? [...CYCLE_FIELDS.slice(0, 7), AREA, CYCLE_FIELDS[7]!] : CYCLE_FIELDS;
}

export function valuesOf(fields: FieldDef[], record: object | undefined): Values {
  const v: Values = {};
  for (const f of fields) {
    const x = (record as Record<string, unknown> | undefined)?.[f.name];
    v[f.name] = x === null || x === undefined ? '' : String(x);
  }
  return v;
}

/** Create a level under its parent; goes to it once made. */
export function CreateLevel(props: {
  title: string;
  op: string;
  fields: FieldDef[];
  url: string;
  initial?: Values;
  go: (made: any) => string;
}) {
  const form = useForm(
    props.op,
    props.initial ?? {},
    props.fields.map((f) => f.name),
  );
  const [open, setOpen] = useState(false);
  return (
    <details class="create" open={open} onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>{props.title}</summary>
      <Form
        form={form}
        fields={props.fields}
        submitLabel="Create"
        onSubmit={() => {
          const body = bodyOf(props.fields, form.values, undefined);
          void form.submit(async () => {
            const made = await api('POST', props.url, { json: body });
            refreshTree();
            navigate(props.go(made));
          }, body);
        }}
      />
    </details>
  );
}

/** Edit a level: only what changed is sent (PATCH); a field emptied is cleared. */
export function EditLevel(props: { op: string; fields: FieldDef[]; url: string; record: object; title?: string }) {
  const initial = valuesOf(props.fields, props.record);
  const form = useForm(
    props.op,
    initial,
    props.fields.map((f) => f.name),
  );
  const [base, setBase] = useState(initial);
  return (
    <details class="edit">
      <summary>{props.title ?? 'Edit details'}</summary>
      <Form
        form={form}
        fields={props.fields}
        submitLabel="Save changes"
        onSubmit={() => {
          const body = bodyOf(props.fields, form.values, base);
          if (!Object.keys(body).length) return;
          void form.submit(async () => {
            const saved = await api('PATCH', props.url, { json: body });
            setBase(valuesOf(props.fields, saved));
            refreshTree();
          }, body);
        }}
      />
    </details>
  );
}

function ChildList<T>(props: { items: T[]; empty: string; render: (x: T) => preact.JSX.Element; label: string }) {
  const { page, pager } = usePage(props.items, 20);
  if (!props.items.length) return <p class="empty">{props.empty}</p>;
  return (
    <>
      <ul class="tiles" aria-label={props.label}>
        {page.map(props.render)}
      </ul>
      {pager}
    </>
  );
}

export function FarmScreen({ ids }: { ids: Ids }) {
  const { organization_id: org } = useSession();
  return (
    <WithPlace ids={ids} need="farm">
      {(place) => {
        const farm = place.farm as Farm;
        const url = apiPath.farm(org, farm.farm_id);
        return (
          <section>
            <Crumbs place={{ farm }} />
            <h1>{farm.name}</h1>
            {farm.location ? <p class="sub">{farm.location}</p> : null}
            <h2>Greenhouses</h2>
            <ChildList
              label="Greenhouses"
              items={farm.greenhouses ?? []}
              empty="No greenhouse yet: add the first one below."
              render={(g: Greenhouse) => (
                <li key={g.greenhouse_id}>
                  <Link href={pathOf('greenhouse', { farm: farm.farm_id, greenhouse: g.greenhouse_id })}>
                    <strong>{g.name}</strong>
                    <span>
                      {g.rows?.length ?? 0} rows · {g.time_zone}
                    </span>
                  </Link>
                </li>
              )}
            />
            <CreateLevel
              title="Add a greenhouse"
              op="create_greenhouse"
              fields={GREENHOUSE_FIELDS}
              url={`${url}/greenhouses`}
              initial={{ time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone }}
              go={(g) => pathOf('greenhouse', { farm: farm.farm_id, greenhouse: g.greenhouse_id })}
            />
            <EditLevel op="update_farm" fields={FARM_FIELDS} url={url} record={farm} title="Edit the farm" />
          </section>
        );
      }}
    </WithPlace>
  );
}

export function GreenhouseScreen({ ids }: { ids: Ids }) {
  const { organization_id: org } = useSession();
  return (
    <WithPlace ids={ids} need="greenhouse">
      {(place) => {
        const farm = place.farm!;
        const gh = place.greenhouse as Greenhouse;
        const url = apiPath.greenhouse(org, farm.farm_id, gh.greenhouse_id);
        return (
          <section>
            <Crumbs place={place} />
            <h1>{gh.name}</h1>
            <p class="sub">
              Clock: {gh.time_zone}
              {gh.latitude !== null && gh.longitude !== null
                ? ` · ${gh.latitude}° N, ${gh.longitude}° E`
                : ' · no location (needed for outdoor weather)'}
              {gh.area_m2 ? ` · ${gh.area_m2} m²` : ''}
            </p>
            <h2>Rows</h2>
            <ChildList
              label="Rows"
              items={gh.rows ?? []}
              empty="No row yet: add the first one below."
              render={(r: Row) => (
                <li key={r.row_id}>
                  <Link href={pathOf('row', { farm: farm.farm_id, greenhouse: gh.greenhouse_id, row: r.row_id })}>
                    <strong>{r.name}</strong>
                    <span>
                      {r.cycles?.length ?? 0} crop cycles{r.plant_count ? ` · ${r.plant_count} plants` : ''}
                    </span>
                  </Link>
                </li>
              )}
            />
            <CreateLevel
              title="Add a row"
              op="create_row"
              fields={ROW_FIELDS}
              url={`${url}/rows`}
              go={(r) => pathOf('row', { farm: farm.farm_id, greenhouse: gh.greenhouse_id, row: r.row_id })}
            />
            <EditLevel op="update_greenhouse" fields={GREENHOUSE_FIELDS} url={url} record={gh} title="Edit the greenhouse" />
          </section>
        );
      }}
    </WithPlace>
  );
}

function CycleCreate({ url, go }: { url: string; go: (c: any) => string }) {
  const fields = useCycleFields();
  return <CreateLevel title="Start a crop cycle" op="create_cycle" fields={fields} url={url} go={go} />;
}

export function RowScreen({ ids }: { ids: Ids }) {
  const { organization_id: org } = useSession();
  return (
    <WithPlace ids={ids} need="row">
      {(place) => {
        const farm = place.farm!;
        const gh = place.greenhouse!;
        const row = place.row as Row;
        const url = apiPath.row(org, farm.farm_id, gh.greenhouse_id, row.row_id);
        const at = { farm: farm.farm_id, greenhouse: gh.greenhouse_id, row: row.row_id };
        return (
          <section>
            <Crumbs place={place} />
            <h1>{row.name}</h1>
            <p class="sub">
              {row.length_m ? `${row.length_m} m` : 'length not set'} · {row.plant_count ?? '?'} plants
            </p>
            <h2>Crop cycles</h2>
            <ChildList
              label="Crop cycles"
              items={[...(row.cycles ?? [])].sort((a, b) => b.started_on.localeCompare(a.started_on))}
              empty="No crop cycle yet: start one below."
              render={(c: Cycle) => (
                <li key={c.cycle_id}>
                  <Link href={pathOf('cycle', { ...at, cycle: c.cycle_id })}>
                    <strong>{c.name}</strong>
                    <span>
                      {c.started_on} → {c.ended_on ?? 'now'}
                      {c.variety ? ` · ${c.variety}` : ''}
                    </span>
                  </Link>
                </li>
              )}
            />
            <CycleCreate url={`${url}/cycles`} go={(c) => pathOf('cycle', { ...at, cycle: c.cycle_id })} />
            <EditLevel op="update_row" fields={ROW_FIELDS} url={url} record={row} title="Edit the row" />
          </section>
        );
      }}
    </WithPlace>
  );
}
