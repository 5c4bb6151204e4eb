// A crop cycle: its jobs (walk a row, the week, records, climate), its walks, and its details.
import { useState } from 'preact/hooks';
import { get, type Counts, type Paged } from '../api';
import { Link } from '../router';
import { pathOf } from '../routes';
import { apiPath, type Cycle } from '../tree';
import { useSession } from '../session';
import { thisWeek, weekName } from '../weeks';
import { fmtInstant, Loading, Pager, ProblemBox, useLoad } from '../ui';
import { cycleIds, Crumbs, WithPlace, type Ids } from './common';
import { EditLevel, useCycleFields } from './registry';

export interface WalkItem {
  job_id: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  progress: number;
  error: string | null;
  week: string | null;
  clips: number;
  counts: Counts | null;
  corrected_counts: Counts | null;
  finished_at: string | null;
}

export function WalksList({ url, week }: { url: string; week?: string }) {
  const [offset, setOffset] = useState(0);
  const limit = 10;
  const { data, error } = useLoad((signal) => get<Paged<WalkItem>>(`${url}/walks`, { limit, offset, week }, signal), [url, offset, week]);
  if (error) return <ProblemBox problem={error} />;
  if (!data) return <Loading what="Loading walks" />;
  if (!data.total) return <p class="empty">No walk {week ? 'this week' : 'yet'}.</p>;
  return (
    <>
      <ul class="list walks">
        {data.items.map((w) => {
          const c = w.corrected_counts ?? w.counts;
          return (
            <li key={w.job_id}>
              <Link href={pathOf('walk', { walk: w.job_id })}>
                <strong>{w.week ? weekName(w.week) : 'no week'}</strong>
                <span>
                  {w.status === 'done' && c
                    ? `${c.total} fruit: ${c.green} green, ${c.turning} turning, ${c.red} red${w.corrected_counts && w.counts && w.corrected_counts.total !== w.counts.total ? ' (corrected)' : ''}`
                    : w.status === 'failed'
                      ? `failed: ${w.error ?? ''}`
                      : `${w.status}, ${Math.round(w.progress * 100)} %`}
                </span>
                <span class="when">{fmtInstant(w.finished_at)}</span>
              </Link>
            </li>
          );
        })}
      </ul>
      <Pager offset={offset} limit={limit} total={data.total} onPage={setOffset} what="walks" />
    </>
  );
}

function CycleEdit({ url, cycle }: { url: string; cycle: Cycle }) {
  const fields = useCycleFields(cycle);
  return <EditLevel op="update_cycle" fields={fields} url={url} record={cycle} title="Edit the crop cycle" key={fields.length} />;
}

export function CycleScreen({ ids }: { ids: Ids }) {
  const { organization_id: org } = useSession();
  return (
    <WithPlace ids={ids} need="cycle">
      {(place) => {
        const c = place.cycle!;
        const at = cycleIds(place);
        const url = apiPath.cycle(org, at.farm, at.greenhouse, at.row, at.cycle);
        const week = thisWeek(place.greenhouse!.time_zone);
        return (
          <section>
            <Crumbs place={place} />
            <h1>
              {place.row!.name} · {c.name}
            </h1>
            <p class="sub">
              {[c.crop, c.variety].filter(Boolean).join(' ') || 'crop not set'} · planted {c.started_on}
              {c.ended_on ? `, cleared ${c.ended_on}` : ''}
              {c.plants_per_m2 ? ` · ${c.plants_per_m2} plants/m²` : ''}
              {c.stems_per_m2 ? ` · ${c.stems_per_m2} stems/m²` : ''}
              {c.area_m2 ? ` · ${c.area_m2} m²` : ''}
            </p>
            <ul class="jobs" aria-label="Jobs">
              <li>
                <Link href={pathOf('walkRow', at)} class="job walk">
                  <strong>Walk the row</strong>
                  <span>Film or photograph, then count</span>
                </Link>
              </li>
              <li>
                <Link href={pathOf('week', { ...at, week })} class="job week">
                  <strong>The week</strong>
                  <span>{weekName(week)}: harvest, forecast</span>
                </Link>
              </li>
              <li>
                <Link href={pathOf('records', at)} class="job records">
                  <strong>Records</strong>
                  <span>Harvest, irrigation, trusses, note</span>
                </Link>
              </li>
              <li>
                <Link href={pathOf('climate', at)} class="job climate">
                  <strong>Climate</strong>
                  <span>Import an export, see a chart</span>
                </Link>
              </li>
            </ul>
            <h2>Walks</h2>
            <WalksList url={url} />
            <CycleEdit url={url} cycle={c} />
          </section>
        );
      }}
    </WithPlace>
  );
}
