// Climate: upload a climate-computer export, read the preview (columns, units, time range, warnings,
// blocking problems), confirm the columns and import; the imports with undo; a chart of a metric.
import { useMemo, useState } from 'preact/hooks';
import { api, ApiError, get, upload, type Paged } from '../api';
import { apiPath } from '../tree';
import { useSession } from '../session';
import { todayIn } from '../weeks';
import { Chart, type ChartSpec } from '../chart';
import { Field, fmtInstant, fmtNumber, Loading, Notice, Pager, ProblemBox, ProgressBar, useLoad } from '../ui';
import { cycleIds, Crumbs, WithPlace, type Ids } from './common';

interface Issue {
  code: string;
  message: string;
  count?: number;
}
interface Column {
  index: number;
  header: string;
  metric: string | null;
  unit: string | null;
  canonical_unit?: string | null;
  conversion: string | null;
  confidence: number;
  setpoint?: boolean;
  selected: boolean;
}
interface Mapping {
  columns: { index: number; header: string; metric: string; unit: string }[];
  [k: string]: unknown;
}
interface Preview {
  file_name: string | null;
  columns: Column[];
  time_zone: string;
  time_range: { from?: string; to?: string };
  first_hours?: { hour: string; values: Record<string, number> }[];
  already_stored?: { metric: string; readings: number }[];
  warnings: Issue[];
  blocking: Issue[];
  mapping: Mapping | null;
}
interface Import {
  id: string;
  file_name: string;
  kind: string;
  created_at: string;
  readings_added: number;
  readings_updated: number;
  readings_skipped: number;
  time_range: { from: string; to: string } | null;
  metrics: string[];
  status: 'done' | 'failed' | 'undone';
  failure_reason: string | null;
}

export const METRICS: [string, string, string][] = [
  ['air_temperature', 'Air temperature', '°C'],
  ['relative_humidity', 'Relative humidity', '%'],
  ['co2', 'CO₂', 'ppm'],
  ['global_radiation', 'Global radiation', 'W/m²'],
  ['par', 'PAR light', 'µmol/m²/s'],
  ['radiation_sum', 'Radiation sum', 'J/cm²'],
  ['vpd', 'VPD', 'kPa'],
  ['pipe_temperature', 'Pipe temperature', '°C'],
  ['substrate_temperature', 'Substrate temperature', '°C'],
  ['substrate_ec', 'Substrate EC', 'mS/cm'],
  ['vent_opening', 'Vent opening', '%'],
  ['screen_position', 'Screen position', '%'],
  ['outside_temperature', 'Outside temperature', '°C'],
];
const metricName = (m: string | null) => METRICS.find(([k]) => k === m)?.[1] ?? m ?? 'not recognised';

function ImportExport({ url, onImported }: { url: string; onImported: () => void }) {
  const [file, setFile] = useState<File>();
  const [share, setShare] = useState<number>();
  const [stage, setStage] = useState<'choose' | 'checking' | 'preview' | 'importing' | 'done'>('choose');
  const [preview, setPreview] = useState<Preview>();
  const [keep, setKeep] = useState<Set<number>>(new Set());
  const [remember, setRemember] = useState(false);
  const [problem, setProblem] = useState<ApiError>();
  const [result, setResult] = useState<Import>();

  const check = async () => {
    if (!file) return setProblem(new ApiError(422, 'validation_failed', 'Choose the export file first.'));
    setProblem(undefined);
    setStage('checking');
    const form = new FormData();
    form.append('file', file, file.name);
    setShare(0);
    try {
      const p = await upload<Preview>(`${url}/climate/file/preview`, form, setShare).done;
      setPreview(p);
      setKeep(new Set((p.mapping?.columns ?? []).map((c) => c.index)));
      setStage('preview');
    } catch (err) {
      setProblem(err as ApiError);
      setStage('choose');
    } finally {
      setShare(undefined);
    }
  };

  const confirm = async () => {
    if (!file || !preview?.mapping) return;
    const mapping = { ...preview.mapping, columns: preview.mapping.columns.filter((c) => keep.has(c.index)) };
    if (!mapping.columns.length) return setProblem(new ApiError(422, 'validation_failed', 'Keep at least one column to import.'));
    setProblem(undefined);
    setStage('importing');
    const form = new FormData();
    form.append('mapping', JSON.stringify(mapping));
    form.append('remember', String(remember));
    form.append('file', file, file.name);
    setShare(0);
    try {
      const r = await upload<Import>(`${url}/climate/file`, form, setShare).done;
      setResult(r);
      setStage('done');
      onImported();
    } catch (err) {
      setProblem(err as ApiError);
      setStage('preview');
    } finally {
      setShare(undefined);
    }
  };

  return (
    <div class="import">
      <form
        class="form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void check();
        }}
      >
        <Field
          id="climate-file"
          label="Export of the climate computer"
          hint="CSV, text or .xlsx, as the climate computer writes it. Nothing is stored until you confirm."
        >
          <input
            id="climate-file"
            class="file"
            type="file"
            accept=".csv,.txt,.tsv,.xlsx,text/csv,text/plain"
            aria-describedby="climate-file-hint"
            onChange={(e) => {
              setFile(e.currentTarget.files?.[0]);
              setStage('choose');
              setPreview(undefined);
              setResult(undefined);
            }}
          />
        </Field>
        {share !== undefined ? <ProgressBar label={stage === 'importing' ? 'Importing' : 'Sending for a check'} share={share} /> : null}
        <div class="actions">
          <button type="submit" class="primary" disabled={stage === 'checking' || stage === 'importing'}>
            Check the file
          </button>
        </div>
      </form>
      <ProblemBox problem={problem} />
      {preview && (stage === 'preview' || stage === 'importing') ? (
        <div class="preview">
          <h3>What the file holds</h3>
          <p>
            {preview.file_name} · read on the {preview.time_zone} clock · {fmtInstant(preview.time_range.from)} to{' '}
            {fmtInstant(preview.time_range.to)}
          </p>
          {preview.blocking.length ? (
            <Notice tone="warn">
              <p>
                <strong>This file cannot be imported yet:</strong>
              </p>
              <ul>
                {preview.blocking.map((b, i) => (
                  <li key={i}>{b.message}</li>
                ))}
              </ul>
            </Notice>
          ) : null}
          {preview.warnings.length ? (
            <details>
              <summary>{preview.warnings.length} things to know</summary>
              <ul>
                {preview.warnings.map((w, i) => (
                  <li key={i}>{w.message}</li>
                ))}
              </ul>
            </details>
          ) : null}
          <fieldset class="columns">
            <legend>Columns to import</legend>
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Import</th>
                    <th scope="col">Column</th>
                    <th scope="col">Reads as</th>
                    <th scope="col">Unit</th>
                    <th scope="col">Sure</th>
                  </tr>
                </thead>
                <tbody>
                  {preview.columns.map((c) => {
                    const inMapping = preview.mapping?.columns.some((m) => m.index === c.index);
                    return (
                      <tr key={c.index}>
                        <td>
                          <input
                            type="checkbox"
                            id={`col-${c.index}`}
                            aria-label={`Import ${c.header}`}
                            disabled={!inMapping}
                            checked={keep.has(c.index)}
                            onChange={(e) => {
                              const next = new Set(keep);
                              if (e.currentTarget.checked) next.add(c.index);
                              else next.delete(c.index);
                              setKeep(next);
                            }}
                          />
                        </td>
                        <td>
                          <label for={`col-${c.index}`}>{c.header}</label>
                        </td>
                        <td>
                          {metricName(c.metric)}
                          {c.setpoint ? ' (setpoint)' : ''}
                        </td>
                        <td>
                          {c.unit ?? '–'}
                          {c.conversion ? ` (${c.conversion})` : ''}
                        </td>
                        <td>{Math.round(c.confidence * 100)} %</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          </fieldset>
          {preview.already_stored?.some((a) => a.readings) ? (
            <p class="hint">
              Already stored in this period:{' '}
              {preview.already_stored
                .filter((a) => a.readings)
                .map((a) => `${a.readings} ${metricName(a.metric)}`)
                .join(', ')}{' '}
              readings. Importing updates those hours, never doubles them.
            </p>
          ) : null}
          {preview.first_hours?.length ? (
            <details>
              <summary>First hours as they will be stored</summary>
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Hour</th>
                      {Object.keys(preview.first_hours[0]!.values).map((m) => (
                        <th scope="col" key={m}>
                          {metricName(m)}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {preview.first_hours.slice(0, 12).map((h) => (
                      <tr key={h.hour}>
                        <td>{fmtInstant(h.hour)}</td>
                        {Object.values(h.values).map((v, i) => (
                          <td key={i}>{fmtNumber(v, 2)}</td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </details>
          ) : null}
          <label class="check">
            <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} /> Remember these columns for
            this greenhouse (for the watched folder and scripts)
          </label>
          <div class="actions">
            <button type="button" class="primary" disabled={!preview.mapping || stage === 'importing'} onClick={() => void confirm()}>
              {stage === 'importing' ? 'Importing…' : `Import ${keep.size} columns`}
            </button>
            <button type="button" onClick={() => (setStage('choose'), setPreview(undefined))}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      {stage === 'done' && result ? (
        <p role="status" class="saved">
          Imported: {result.readings_added} new hourly values, {result.readings_updated} updated, {result.readings_skipped} unchanged (
          {result.metrics.map(metricName).join(', ')}).
        </p>
      ) : null}
    </div>
  );
}

function Imports({ url, version, onUndone }: { url: string; version: number; onUndone: () => void }) {
  const [offset, setOffset] = useState(0);
  const limit = 10;
  const list = useLoad((s) => get<Paged<Import>>(`${url}/climate/imports`, { limit, offset }, s), [url, offset, version]);
  const [problem, setProblem] = useState<{ id: string; error: ApiError }>();
  const undo = async (id: string, confirm = false) => {
    setProblem(undefined);
    try {
      await api('POST', `${url}/climate/imports/${id}/undo`, { json: confirm ? { confirm: true } : {} });
      list.reload();
      onUndone();
    } catch (err) {
      setProblem({ id, error: err as ApiError });
    }
  };
  if (list.error) return <ProblemBox problem={list.error} />;
  if (!list.data) return <Loading />;
  if (!list.data.total) return <p class="empty">No import yet.</p>;
  return (
    <>
      <ul class="list imports">
        {list.data.items.map((i) => (
          <li key={i.id}>
            <div class="row-line">
              <span>
                <strong>{i.file_name}</strong> · {fmtInstant(i.created_at)} · {i.status}
                {i.status === 'done' ? ` · ${i.readings_added} added, ${i.readings_updated} updated` : ''}
                {i.failure_reason ? ` · ${i.failure_reason}` : ''}
              </span>
              {i.status === 'done' ? (
                <button type="button" onClick={() => void undo(i.id)}>
                  Undo
                </button>
              ) : null}
            </div>
            {problem?.id === i.id ? (
              <div class="problem" role="alert">
                <p>{problem.error.detail}</p>
                {problem.error.status === 409 && (problem.error.body.later_imports || problem.error.body.manual_edits) ? (
                  <button type="button" class="danger" onClick={() => void undo(i.id, true)}>
                    Undo anyway (the later changes go too)
                  </button>
                ) : null}
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      <Pager offset={offset} limit={limit} total={list.data.total} onPage={setOffset} what="imports" />
    </>
  );
}

interface Reading {
  value: number;
  at: string;
}

function daysBefore(date: string, n: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - n);
  return d.toISOString().slice(0, 10);
}

function ClimateChart({ url, zone, version }: { url: string; zone: string; version: number }) {
  const today = todayIn(zone);
  const [metric, setMetric] = useState('air_temperature');
  const [from, setFrom] = useState(daysBefore(today, 6));
  const [to, setTo] = useState(today);
  const [loaded, setLoaded] = useState(0);
  const data = useLoad(
    async (signal) => {
      // Newest first, 1000 a page, up to a season of hourly values; the chart reads them oldest first.
      const all: Reading[] = [];
      for (let offset = 0; offset < 20_000; offset += 1000) {
        const page = await get<Paged<Reading>>(
          `${url}/climate`,
          { metric, from: `${from}T00:00:00`, to: `${to}T23:59:59`, limit: 1000, offset },
          signal,
        );
        all.push(...page.items);
        setLoaded(all.length);
        if (all.length >= page.total || !page.items.length) break;
      }
      return all.reverse();
    },
    [url, metric, from, to, version],
  );
  const unit = METRICS.find(([k]) => k === metric)?.[2] ?? '';
  const spec = useMemo<ChartSpec | undefined>(
    () =>
      data.data?.length
        ? {
            x: data.data.map((r) => Date.parse(r.at) / 1000),
            series: [{ label: metricName(metric), values: data.data.map((r) => r.value), color: '#14532d' }],
            yLabel: unit,
          }
        : undefined,
    [data.data],
  );
  return (
    <>
      <div class="inline-fields">
        <Field id="chart-metric" label="Metric">
          <select id="chart-metric" value={metric} onChange={(e) => setMetric(e.currentTarget.value)}>
            {METRICS.map(([k, label, u]) => (
              <option value={k} key={k}>
                {label} ({u})
              </option>
            ))}
          </select>
        </Field>
        <Field id="chart-from" label="From">
          <input id="chart-from" type="date" value={from} max={to} onChange={(e) => setFrom(e.currentTarget.value)} />
        </Field>
        <Field id="chart-to" label="To">
          <input id="chart-to" type="date" value={to} min={from} onChange={(e) => setTo(e.currentTarget.value)} />
        </Field>
      </div>
      {data.error ? <ProblemBox problem={data.error} /> : null}
      {data.loading ? <p role="status">Reading {loaded ? `${loaded} values` : 'the readings'}…</p> : null}
      {!data.loading && data.data && !data.data.length ? (
        <p class="empty">No {metricName(metric).toLowerCase()} readings in this period.</p>
      ) : null}
      {spec ? (
        <>
          <Chart spec={spec} label={`${metricName(metric)} from ${from} to ${to}, ${data.data!.length} readings`} />
          <p class="hint">
            {data.data!.length} readings · lowest {fmtNumber(Math.min(...spec.series[0]!.values.map((v) => v ?? Infinity)))} {unit} ·
            highest {fmtNumber(Math.max(...spec.series[0]!.values.map((v) => v ?? -Infinity)))} {unit}
          </p>
        </>
      ) : null}
    </>
  );
}

export function ClimateScreen({ ids }: { ids: Ids }) {
  const { organization_id: org } = useSession();
  const [version, setVersion] = useState(0);
  return (
    <WithPlace ids={ids} need="cycle">
      {(place) => {
        const at = cycleIds(place);
        const url = apiPath.cycle(org, at.farm, at.greenhouse, at.row, at.cycle);
        return (
          <section>
            <Crumbs place={place} />
            <h1>Climate</h1>
            <h2>Import an export</h2>
            <ImportExport url={url} onImported={() => setVersion((v) => v + 1)} />
            <h2>Imports</h2>
            <Imports url={url} version={version} onUndone={() => setVersion((v) => v + 1)} />
            <h2>Chart</h2>
            <ClimateChart url={url} zone={place.greenhouse!.time_zone} version={version} />
          </section>
        );
      }}
    </WithPlace>
  );
}
