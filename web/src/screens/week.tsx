// The week: the week read on one screen, the forecast for the next eight weeks with its range beside
// the season's harvest, the stored forecasts against what was realized, the backtest per horizon
// beside the naive baselines, and the export CSV. The forecast routes (issue 35) may not be on a box
// yet: each part then says so and the rest of the screen stands.
import { useMemo, useState } from 'preact/hooks';
import { api, ApiError, get, type Counts, type Paged } from '../api';
import { Link, navigate } from '../router';
import { pathOf } from '../routes';
import { apiPath } from '../tree';
import { useSession } from '../session';
import { addWeeks, isWeekLabel, mondayOf, thisWeek, weekName } from '../weeks';
import { Chart, type ChartSpec } from '../chart';
import { readBacktest, readForecast, readStored, isMissingRoute, type Forecast, type StoredForecast } from '../forecast-shapes';
import { CountsTable, Field, fmtNumber, Input, Loading, Notice, ProblemBox, usePage, useLoad } from '../ui';
import { cycleIds, Crumbs, WithPlace, type Ids } from './common';
import type { WalkItem } from './cycle';

type Obj = Record<string, any>;

const LABELS: Record<string, [string, string?]> = {
  kg: ['Harvested', 'kg'],
  harvests: ['Picks'],
  picks: ['Picks'],
  kg_per_m2: ['Harvested per m²', 'kg/m²'],
  entries: ['Entries'],
  volume_l: ['Water given', 'L'],
  drain_l: ['Drain', 'L'],
  drain_pct: ['Drain', '%'],
  drain_percent: ['Drain', '%'],
  ec_in: ['EC given (mean)', 'mS/cm'],
  ec_drain: ['EC drain (mean)', 'mS/cm'],
  ph_in: ['pH given (mean)'],
  ph_drain: ['pH drain (mean)'],
  mean_air_temperature: ['Air temperature, 24 h mean', '°C'],
  air_temperature_24h: ['Air temperature, 24 h mean', '°C'],
  air_temperature_day: ['Air temperature, day mean', '°C'],
  air_temperature_night: ['Air temperature, night mean', '°C'],
  relative_humidity: ['Relative humidity, mean', '%'],
  co2_day: ['CO₂ by day, mean', 'ppm'],
  radiation_sum: ['Radiation sum', 'J/cm²'],
  light_integral: ['Light integral', 'mol/m²'],
  vpd: ['VPD, mean', 'kPa'],
  kg_per_m3: ['Water productivity', 'kg/m³'],
  week_kg_per_m3: ['This week', 'kg/m³'],
  cycle_kg_per_m3: ['Cycle so far', 'kg/m³'],
  green_g: ['Green fruit', 'g'],
  turning_g: ['Turning fruit', 'g'],
  red_g: ['Red fruit', 'g'],
};

const words = (k: string) => LABELS[k]?.[0] ?? k.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

/** The figures of a part of the week read, whatever the box answers in it: numbers with their units, nested parts in turn. */
function Figures({ data }: { data: Obj }) {
  const entries = Object.entries(data).filter(
    ([k, v]) => v !== null && v !== undefined && !/(_id|^week|^start|^end|^version|_at)$/.test(k),
  );
  if (!entries.length) return <p class="empty">Nothing recorded.</p>;
  return (
    <dl class="figures">
      {entries.map(([k, v]) => {
        if (v && typeof v === 'object' && !Array.isArray(v)) {
          const value = typeof v.value === 'number' ? v.value : typeof v.mean === 'number' ? v.mean : undefined;
          if (value !== undefined)
            return (
              <div key={k}>
                <dt>{words(k)}</dt>
                <dd>
                  {fmtNumber(value, 2)} {LABELS[k]?.[1] ?? v.unit ?? ''}
                  {typeof v.hours === 'number' ? <span class="hint"> ({v.hours} h)</span> : null}
                </dd>
              </div>
            );
          return (
            <div key={k} class="nested">
              <dt>{words(k)}</dt>
              <dd>
                <Figures data={v} />
              </dd>
            </div>
          );
        }
        if (Array.isArray(v)) return null;
        return (
          <div key={k}>
            <dt>{words(k)}</dt>
            <dd>
              {typeof v === 'number' ? fmtNumber(v, 2) : String(v)} {typeof v === 'number' ? (LABELS[k]?.[1] ?? '') : ''}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}

function sumCounts(walks: WalkItem[], pick: (w: WalkItem) => Counts | null): Counts | null {
  const done = walks.filter((w) => w.status === 'done' && pick(w));
  if (!done.length) return null;
  return done.reduce(
    (s, w) => {
      const c = pick(w)!;
      return { green: s.green + c.green, turning: s.turning + c.turning, red: s.red + c.red, total: s.total + c.total };
    },
    { green: 0, turning: 0, red: 0, total: 0 },
  );
}

function Unavailable({ what, error }: { what: string; error: ApiError }) {
  if (isMissingRoute(error))
    return (
      <Notice>{what} are not on this box yet: it answers the route with “not found”. They appear here once the box is updated.</Notice>
    );
  return <ProblemBox problem={error} />;
}

const t = (label: string) => Date.parse(`${mondayOf(label)}T00:00:00Z`) / 1000;

async function seasonHarvest(url: string, signal: AbortSignal): Promise<Map<string, number>> {
  const byWeek = new Map<string, number>();
  for (let offset = 0; offset < 20_000; offset += 500) {
    const page = await get<Paged<{ week: string; kg: number }>>(`${url}/harvests`, { limit: 500, offset }, signal);
    for (const h of page.items) byWeek.set(h.week, (byWeek.get(h.week) ?? 0) + h.kg);
    if (offset + page.items.length >= page.total || !page.items.length) break;
  }
  return byWeek;
}

function ForecastPart({ url, week, harvest }: { url: string; week: string; harvest?: Map<string, number> }) {
  const fc = useLoad((s) => get(`${url}/forecast`, { week }, s).then(readForecast), [url, week]);
  const spec = useMemo<ChartSpec | undefined>(() => {
    const weeks = new Set<string>(harvest ? [...harvest.keys()] : []);
    for (const w of fc.data?.weeks ?? []) weeks.add(w.week);
    if (!weeks.size) return undefined;
    const labels = [...weeks].sort();
    const byWeek = new Map((fc.data?.weeks ?? []).map((w) => [w.week, w]));
    return {
      x: labels.map(t),
      weeks: true,
      yLabel: 'kg',
      series: [
        { label: 'Harvested (kg)', values: labels.map((l) => harvest?.get(l) ?? null), color: '#1f2937', points: true },
        { label: 'Forecast (kg)', values: labels.map((l) => byWeek.get(l)?.kg ?? null), color: '#c4161c', width: 3, points: true },
        { label: 'Low (10 %)', values: labels.map((l) => byWeek.get(l)?.low ?? null), color: 'rgba(196,22,28,0.5)', dash: [4, 4] },
        { label: 'High (90 %)', values: labels.map((l) => byWeek.get(l)?.high ?? null), color: 'rgba(196,22,28,0.5)', dash: [4, 4] },
      ],
      band: [2, 3],
    };
  }, [fc.data, harvest]);
  return (
    <>
      {fc.error ? <Unavailable what="Forecasts" error={fc.error} /> : null}
      {fc.data?.notes.map((n, i) => (
        <Notice key={i}>{n}</Notice>
      ))}
      {spec ? (
        <Chart spec={spec} label={`Harvest per week${fc.data ? ' and the forecast for the next eight weeks with its range' : ''}`} />
      ) : fc.loading ? (
        <Loading what="Loading the forecast" />
      ) : null}
      {fc.data?.weeks.length ? <ForecastTable forecast={fc.data} harvest={harvest} /> : null}
    </>
  );
}

function ForecastTable({ forecast, harvest }: { forecast: Forecast; harvest?: Map<string, number> }) {
  // A table wider than a phone scrolls inside its wrapper: focusable, so it scrolls from the keyboard too.
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Forecast table">
      <table>
        <caption>Forecast as of {forecast.asOf ? weekName(forecast.asOf) : 'this week'}</caption>
        <thead>
          <tr>
            <th scope="col">Week</th>
            <th scope="col">Forecast (kg)</th>
            <th scope="col">Range (kg)</th>
            <th scope="col">Harvested (kg)</th>
          </tr>
        </thead>
        <tbody>
          {forecast.weeks.map((w) => (
            <tr key={w.week}>
              <th scope="row">{weekName(w.week)}</th>
              <td>
                {fmtNumber(w.kg)}
                {w.kgPerM2 !== null ? <span class="hint"> ({fmtNumber(w.kgPerM2, 2)} kg/m²)</span> : null}
              </td>
              <td>{w.low !== null && w.high !== null ? `${fmtNumber(w.low)} – ${fmtNumber(w.high)}` : '–'}</td>
              <td>{fmtNumber(harvest?.get(w.week) ?? w.realized)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function StoredPart({ url, week, harvest }: { url: string; week: string; harvest?: Map<string, number> }) {
  const [version, setVersion] = useState(0);
  const list = useLoad((s) => get(`${url}/forecasts`, {}, s).then(readStored), [url, version]);
  const [problem, setProblem] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const { page, pager } = usePage<StoredForecast>(list.data ?? [], 3);
  return (
    <>
      {list.error ? <Unavailable what="Stored forecasts" error={list.error} /> : null}
      {!list.error ? (
        <div class="actions">
          <button
            type="button"
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              setProblem(undefined);
              try {
                await api('POST', `${url}/forecasts`, { query: { week } });
                setVersion((v) => v + 1);
              } catch (err) {
                setProblem(err as ApiError);
              } finally {
                setBusy(false);
              }
            }}
          >
            Store the forecast of {weekName(week)}
          </button>
        </div>
      ) : null}
      {problem ? (
        isMissingRoute(problem) ? (
          <Unavailable what="Stored forecasts" error={problem} />
        ) : (
          <ProblemBox problem={problem} />
        )
      ) : null}
      {list.data && !list.data.length ? (
        <p class="empty">No forecast stored yet: store one each week to see later how right it was.</p>
      ) : null}
      {page.map((f) => (
        <div class="table-wrap" key={f.id} tabIndex={0} role="region" aria-label={`Stored forecast ${f.asOf ?? ''}`}>
          <table>
            <caption>
              Made for {f.asOf ? weekName(f.asOf) : '?'}
              {f.createdAt ? `, stored ${f.createdAt.slice(0, 10)}` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Week</th>
                <th scope="col">Forecast (kg)</th>
                <th scope="col">Realized (kg)</th>
                <th scope="col">Error (kg)</th>
              </tr>
            </thead>
            <tbody>
              {f.weeks.map((w) => {
                const real = w.realized ?? harvest?.get(w.week) ?? null;
                return (
                  <tr key={w.week}>
                    <th scope="row">{weekName(w.week)}</th>
                    <td>{fmtNumber(w.kg)}</td>
                    <td>{fmtNumber(real)}</td>
                    <td>{real !== null && w.kg !== null ? fmtNumber(w.kg - real) : '–'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ))}
      {pager}
    </>
  );
}

function BacktestPart({ url }: { url: string }) {
  const bt = useLoad((s) => get(`${url}/backtest`, {}, s).then(readBacktest), [url]);
  if (bt.error) return <Unavailable what="Backtests" error={bt.error} />;
  if (!bt.data) return <Loading what="Replaying the season" />;
  if (!bt.data.length) return <p class="empty">Not enough weeks with harvests to replay yet.</p>;
  const pct = (x: number | null) => (x === null ? '–' : `${Math.round(x * 100)} %`);
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label="Backtest table">
      <table class="backtest">
        <caption>Error of past forecasts, per weeks ahead (WAPE: error as a share of the harvest; lower is better)</caption>
        <thead>
          <tr>
            <th scope="col">Weeks ahead</th>
            <th scope="col">Weeks replayed</th>
            <th scope="col">Model WAPE</th>
            <th scope="col">Last week's harvest</th>
            <th scope="col">3-week mean</th>
            <th scope="col">Model mean error (kg)</th>
            <th scope="col">Bias (kg)</th>
          </tr>
        </thead>
        <tbody>
          {bt.data.map((h) => {
            const best = Math.min(h.persistence.wape ?? Infinity, h.mean3.wape ?? Infinity);
            const better = h.wape !== null && h.wape < best;
            return (
              <tr key={h.horizon}>
                <th scope="row">{h.horizon}</th>
                <td>{h.n}</td>
                <td class={better ? 'good' : 'bad'}>
                  {pct(h.wape)} {better ? '(better)' : '(not better)'}
                </td>
                <td>{pct(h.persistence.wape)}</td>
                <td>{pct(h.mean3.wape)}</td>
                <td>{fmtNumber(h.maeKg)}</td>
                <td>{fmtNumber(h.biasKg)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function ExportPart({ url }: { url: string }) {
  const [problem, setProblem] = useState<ApiError>();
  const download = async (semicolon: boolean) => {
    setProblem(undefined);
    try {
      const res = await api<Response>('GET', `${url}/export.csv`, {
        raw: true,
        query: semicolon ? { delimiter: 'semicolon' } : undefined,
        headers: { accept: 'text/csv' },
      });
      const name = /filename="?([^";]+)"?/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'cropwalk-export.csv';
      const blob = await res.blob();
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    } catch (err) {
      setProblem(err as ApiError);
    }
  };
  return (
    <>
      <div class="actions">
        <button type="button" onClick={() => void download(false)}>
          Download the CSV (commas)
        </button>
        <button type="button" onClick={() => void download(true)}>
          CSV for European spreadsheets (;)
        </button>
      </div>
      {problem ? <Unavailable what="Exports" error={problem} /> : null}
    </>
  );
}

export function WeekScreen({ ids }: { ids: Ids }) {
  const { organization_id: org } = useSession();
  return (
    <WithPlace ids={ids} need="cycle">
      {(place) => {
        const at = cycleIds(place);
        const url = apiPath.cycle(org, at.farm, at.greenhouse, at.row, at.cycle);
        const week = ids.week && isWeekLabel(ids.week) ? ids.week : thisWeek(place.greenhouse!.time_zone);
        return <Week url={url} week={week} at={at} place={place} />;
      }}
    </WithPlace>
  );
}

function Week({
  url,
  week,
  at,
  place,
}: {
  url: string;
  week: string;
  at: ReturnType<typeof cycleIds>;
  place: Parameters<typeof Crumbs>[0]['place'];
}) {
  const read = useLoad((s) => get<Obj>(`${url}/weeks/${week}`, {}, s), [url, week]);
  const walks = useLoad((s) => get<Paged<WalkItem>>(`${url}/walks`, { week, limit: 100 }, s), [url, week]);
  const harvest = useLoad((s) => seasonHarvest(url, s), [url]);
  const [typed, setTyped] = useState(week);
  const go = (w: string) => navigate(pathOf('week', { ...at, week: w }), true);
  const known = [
    'harvest',
    'irrigation',
    'climate',
    'water_productivity',
    'weather',
    'outdoor_weather',
    'fruit_mass',
    'note',
    'walks',
    'forecast',
  ];
  const r = read.data;
  const extra = r ? Object.entries(r).filter(([k, v]) => v && typeof v === 'object' && !Array.isArray(v) && !known.includes(k)) : [];
  const busy = read.loading || walks.loading || harvest.loading;
  const model = walks.data ? sumCounts(walks.data.items, (w) => w.counts) : null;
  const corrected = walks.data ? sumCounts(walks.data.items, (w) => w.corrected_counts ?? w.counts) : null;
  return (
    <section class="week" aria-busy={busy}>
      <Crumbs place={place} />
      <h1>{weekName(week)}</h1>
      <nav class="week-nav" aria-label="Weeks">
        <Link href={pathOf('week', { ...at, week: addWeeks(week, -1) })}>‹ {weekName(addWeeks(week, -1))}</Link>
        <form
          class="inline-fields"
          onSubmit={(e) => {
            e.preventDefault();
            if (isWeekLabel(typed)) go(typed);
          }}
        >
          <Field id="week-pick" label="Go to week" error={typed && !isWeekLabel(typed) ? 'is not a week (2026-W07)' : undefined}>
            <Input def={{ name: 'week', label: 'Week', kind: 'week' }} id="week-pick" value={typed} onValue={setTyped} />
          </Field>
          <button type="submit">Go</button>
        </form>
        <Link href={pathOf('week', { ...at, week: addWeeks(week, 1) })}>{weekName(addWeeks(week, 1))} ›</Link>
      </nav>
      {read.error ? <ProblemBox problem={read.error} /> : null}
      <div class="cards">
        <article class="card">
          <h2>Walks</h2>
          {walks.data ? (
            walks.data.total ? (
              <>
                <CountsTable model={model} corrected={corrected} caption={`${walks.data.total} walk${walks.data.total > 1 ? 's' : ''}`} />
                <ul class="list">
                  {walks.data.items.map((w) => (
                    <li key={w.job_id}>
                      <Link href={pathOf('walk', { walk: w.job_id })}>
                        Walk {w.status === 'done' ? `· ${(w.corrected_counts ?? w.counts)?.total ?? 0} fruit` : `· ${w.status}`}
                      </Link>
                    </li>
                  ))}
                </ul>
              </>
            ) : (
              <p class="empty">
                No walk this week. <Link href={pathOf('walkRow', at)}>Walk the row</Link>
              </p>
            )
          ) : (
            <Loading />
          )}
        </article>
        <article class="card">
          <h2>Harvest</h2>
          {r ? <Figures data={r.harvest ?? {}} /> : <Loading />}
          <p>
            <Link href={`${pathOf('records', at)}?tab=harvests`}>Record a harvest</Link>
          </p>
        </article>
        <article class="card">
          <h2>Irrigation</h2>
          {r ? <Figures data={r.irrigation ?? {}} /> : <Loading />}
        </article>
        {r?.water_productivity ? (
          <article class="card">
            <h2>Water productivity</h2>
            <Figures data={r.water_productivity} />
          </article>
        ) : null}
        {r?.climate ? (
          <article class="card">
            <h2>Climate</h2>
            <Figures data={r.climate} />
          </article>
        ) : null}
        {(r?.weather ?? r?.outdoor_weather) ? (
          <article class="card">
            <h2>Outdoor weather</h2>
            <Figures data={r.weather ?? r.outdoor_weather} />
          </article>
        ) : null}
        {r?.forecast ? (
          <article class="card">
            <h2>Forecast for this week</h2>
            <Figures data={r.forecast} />
          </article>
        ) : null}
        {r?.fruit_mass ? (
          <article class="card">
            <h2>Fruit mass in force</h2>
            <Figures data={r.fruit_mass} />
          </article>
        ) : null}
        {extra.map(([k, v]) => (
          <article class="card" key={k}>
            <h2>{words(k)}</h2>
            <Figures data={v} />
          </article>
        ))}
        <article class="card">
          <h2>Note</h2>
          {r ? (
            r.note ? (
              <p class="note">{typeof r.note.text === 'string' ? r.note.text : JSON.stringify(r.note)}</p>
            ) : (
              <p class="empty">No note for this week.</p>
            )
          ) : (
            <Loading />
          )}
          <p>
            <Link href={`${pathOf('records', at)}?tab=note`}>Write the note</Link>
          </p>
        </article>
      </div>
      <h2>Forecast: the next eight weeks</h2>
      <ForecastPart url={url} week={week} harvest={harvest.data} />
      <h2>Stored forecasts and what was harvested</h2>
      <StoredPart url={url} week={week} harvest={harvest.data} />
      <h2>How right the forecast has been</h2>
      <BacktestPart url={url} />
      <h2>Export</h2>
      <ExportPart url={url} />
    </section>
  );
}
