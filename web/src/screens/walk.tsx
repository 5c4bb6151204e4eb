// A walk: the scoring as it runs, then the counts by ripeness and the frames with their overlays,
// and the corrections: tap a box to change its ripeness or remove it, draw a box to add a missed
// fruit, set counts by hand, undo. Model and corrected counts side by side. The box's 409s are shown
// in its own words.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, get, type Counts } from '../api';
import { Link } from '../router';
import { pathOf } from '../routes';
import { useSession } from '../session';
import { weekName } from '../weeks';
import {
  bodyOf,
  CountsTable,
  Form,
  Loading,
  Notice,
  Pager,
  ProblemBox,
  ProgressBar,
  RIPENESS,
  useForm,
  type FieldDef,
  type Ripeness,
} from '../ui';

interface Frame {
  index: number;
  clip: number;
  time_s: number;
  width: number;
  height: number;
  detections: number;
  image_url: string;
  overlay_url: string;
}
interface ModelFruit {
  track_id: number;
  ripeness: Ripeness;
  box: number[];
  frame: number;
}
interface Observation {
  job_id: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  progress: number;
  error: string | null;
  farm_id: string | null;
  greenhouse_id: string | null;
  row_id: string | null;
  cycle_id: string | null;
  week: string | null;
  clips: { position: number; name: string; status: string; progress: number; frames: number }[];
  counts: Counts | null;
  corrected_counts: Counts | null;
  result: null | {
    frames: Frame[];
    fruit: ModelFruit[];
    quality: { score: number; warnings: { code: string; message: string }[] };
  };
}
interface Correction {
  correction_id: string;
  kind: 'ripeness' | 'remove' | 'add' | 'counts';
  track_id: number | null;
  ripeness: Ripeness | null;
  frame_id: number | null;
  box: number[] | null;
  counts: Partial<Record<Ripeness, number>> | null;
  note: string | null;
}
interface Fruit {
  track_id: number | null;
  ripeness: Ripeness;
  model_ripeness: Ripeness | null;
  frame: number;
  box: number[] | null;
  correction_id: string | null;
}
interface Corrections {
  status: string;
  corrections: Correction[];
  fruit: Fruit[];
  removed_track_ids: number[];
  model_counts: Counts | null;
  corrected_counts: Counts | null;
}

const COLOURS: Record<Ripeness, string> = { green: '#1b7a2e', turning: '#e07000', red: '#c4161c' };

function usePolledWalk(id: string) {
  const [walk, setWalk] = useState<Observation>();
  const [problem, setProblem] = useState<ApiError>();
  useEffect(() => {
    let live = true;
    let timer: number | undefined;
    let wait = 700;
    const tick = async () => {
      try {
        const w = await get<Observation>(`/api/observations/${id}`);
        if (!live) return;
        setWalk(w);
        setProblem(undefined);
        wait = 700;
        if (w.status === 'queued' || w.status === 'running') timer = window.setTimeout(tick, wait);
      } catch (err) {
        if (!live) return;
        setProblem(err as ApiError);
        // A dropped connection on the greenhouse wifi: keep asking, less often; a 404 stops.
        if ((err as ApiError).status !== 404 && (err as ApiError).status !== 401)
          timer = window.setTimeout(tick, (wait = Math.min(wait * 2, 10_000)));
      }
    };
    void tick();
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [id]);
  return { walk, problem };
}

function Scoring({ walk }: { walk: Observation }) {
  return (
    <div class="scoring" aria-live="polite">
      <ProgressBar label={walk.status === 'queued' ? 'Waiting to be counted' : 'Counting the fruit'} share={walk.progress} />
      {walk.clips.length > 1
        ? walk.clips.map((c) => <ProgressBar key={c.position} label={`Clip ${c.position + 1} (${c.name})`} share={c.progress} />)
        : null}
      <p class="hint">You can leave this page: the box goes on counting, and the walk is listed under its crop cycle.</p>
    </div>
  );
}

/** One frame, its fruit as boxes to tap, and a box to draw for a fruit the model missed. */
function FrameEditor(props: {
  frame: Frame;
  fruit: Fruit[];
  removed: ModelFruit[];
  selected?: string;
  onSelect: (key: string) => void;
  drawing: boolean;
  onDrawn: (box: number[]) => void;
}) {
  const { frame } = props;
  const svg = useRef<SVGSVGElement>(null);
  const [draft, setDraft] = useState<number[]>();
  const start = useRef<[number, number]>();
  const at = (e: PointerEvent): [number, number] => {
    const r = svg.current!.getBoundingClientRect();
    const x = Math.min(frame.width, Math.max(0, ((e.clientX - r.left) / r.width) * frame.width));
    const y = Math.min(frame.height, Math.max(0, ((e.clientY - r.top) / r.height) * frame.height));
    return [x, y];
  };
  const stroke = Math.max(2, frame.width / 300);
  return (
    <div class={`frame-editor${props.drawing ? ' drawing' : ''}`}>
      <img
        src={frame.image_url}
        width={frame.width}
        height={frame.height}
        alt={`Frame ${frame.index + 1} of the walk, at ${frame.time_s.toFixed(1)} s`}
      />
      <svg
        ref={svg}
        viewBox={`0 0 ${frame.width} ${frame.height}`}
        preserveAspectRatio="none"
        role="group"
        aria-label="Fruit in this frame"
        onPointerDown={(e) => {
          if (!props.drawing) return;
          e.preventDefault();
          (e.currentTarget as Element).setPointerCapture(e.pointerId);
          start.current = at(e);
          setDraft([...start.current, ...start.current]);
        }}
        onPointerMove={(e) => {
          if (!props.drawing || !start.current) return;
          const [x, y] = at(e);
          const [x0, y0] = start.current;
          setDraft([Math.min(x0, x), Math.min(y0, y), Math.max(x0, x), Math.max(y0, y)]);
        }}
        onPointerUp={() => {
          if (!props.drawing || !start.current || !draft) return;
          start.current = undefined;
          const box = draft.map((v) => Math.round(v));
          setDraft(undefined);
          if (box[2]! - box[0]! >= 4 && box[3]! - box[1]! >= 4) props.onDrawn(box);
        }}
      >
        {props.removed.map((f) => {
          const key = `t${f.track_id}`;
          const [x1, y1, x2, y2] = f.box as [number, number, number, number];
          return (
            <rect
              key={key}
              class={`box removed${props.selected === key ? ' selected' : ''}`}
              x={x1}
              y={y1}
              width={x2 - x1}
              height={y2 - y1}
              stroke="#555"
              stroke-width={stroke}
              stroke-dasharray={`${stroke * 3} ${stroke * 2}`}
              fill="rgba(255,255,255,0.25)"
              role="button"
              tabIndex={0}
              aria-label={`Fruit ${f.track_id}, removed`}
              onClick={() => !props.drawing && props.onSelect(key)}
              onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && props.onSelect(key)}
            />
          );
        })}
        {props.fruit.map((f) => {
          const key = f.track_id !== null ? `t${f.track_id}` : `c${f.correction_id}`;
          const [x1, y1, x2, y2] = f.box as [number, number, number, number];
          return (
            <g key={key}>
              <rect
                class={`box${props.selected === key ? ' selected' : ''}`}
                x={x1}
                y={y1}
                width={x2 - x1}
                height={y2 - y1}
                stroke={COLOURS[f.ripeness]}
                stroke-width={props.selected === key ? stroke * 2.5 : stroke}
                fill={props.selected === key ? 'rgba(255,255,255,0.2)' : 'rgba(0,0,0,0.01)'}
                role="button"
                tabIndex={0}
                aria-label={`Fruit ${f.track_id ?? 'added'}, ${f.ripeness}`}
                data-fruit={key}
                onClick={() => !props.drawing && props.onSelect(key)}
                onKeyDown={(e) => (e.key === 'Enter' || e.key === ' ') && props.onSelect(key)}
              />
              <text
                x={x1 + stroke}
                y={Math.max(y1 - stroke, 12 * stroke)}
                fill={COLOURS[f.ripeness]}
                font-size={10 * stroke}
                font-weight="bold"
                aria-hidden="true"
              >
                {f.ripeness[0]!.toUpperCase()}
                {f.track_id ?? '+'}
              </text>
            </g>
          );
        })}
        {draft ? (
          <rect
            x={draft[0]}
            y={draft[1]}
            width={draft[2]! - draft[0]!}
            height={draft[3]! - draft[1]!}
            stroke="#0050b3"
            stroke-width={stroke}
            fill="rgba(0,80,179,0.15)"
          />
        ) : null}
      </svg>
    </div>
  );
}

const COUNT_FIELDS: FieldDef[] = RIPENESS.map((r) => ({ name: r, label: r[0]!.toUpperCase() + r.slice(1), kind: 'integer' as const }));

function CountsForm({
  base,
  existing,
  corrected,
  onDone,
}: {
  base: string;
  existing?: Correction;
  corrected: Counts | null;
  onDone: (c: any) => void;
}) {
  const initial = Object.fromEntries(
    RIPENESS.map((r) => [r, existing?.counts?.[r] !== undefined ? String(existing.counts[r]) : '']),
  ) as Record<string, string>;
  const form = useForm(existing ? 'update_walk_correction' : 'create_walk_correction', initial, ['counts', ...RIPENESS]);
  return (
    <Form
      form={form}
      fields={COUNT_FIELDS}
      class="form counts-form"
      submitLabel={existing ? 'Change the counts' : 'Set the counts'}
      onSubmit={() => {
        const counts = bodyOf(COUNT_FIELDS, form.values, undefined);
        const body = existing ? { counts } : { kind: 'counts', counts };
        if (!Object.keys(counts).length) return;
        void form.submit(async () => {
          const r = existing
            ? await api('PATCH', `${base}/${existing.correction_id}`, { json: body })
            : await api('POST', base, { json: body });
          onDone(r);
        }, body);
      }}
    >
      <p class="hint">
        Counted by hand? Type the classes you counted; the others keep the walk's count
        {corrected ? ` (now ${corrected.green} green, ${corrected.turning} turning, ${corrected.red} red)` : ''}.
      </p>
    </Form>
  );
}

function Corrector({ walk }: { walk: Observation }) {
  const session = useSession();
  const base = `/api/organizations/${session.organization_id}/walks/${walk.job_id}/corrections`;
  const [data, setData] = useState<Corrections>();
  const [problem, setProblem] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const [frameAt, setFrameAt] = useState<number>();
  const [selected, setSelected] = useState<string>();
  const [drawing, setDrawing] = useState(false);
  const [drawn, setDrawn] = useState<number[]>();
  const [stripOffset, setStripOffset] = useState(0);
  const frames = walk.result!.frames;

  const load = async () => {
    const d = await get<Corrections>(base);
    setData(d);
    return d;
  };
  useEffect(() => {
    load().catch((e) => setProblem(e as ApiError));
  }, [walk.job_id]);

  // The frame with the most fruit first: where most of the checking is.
  const busiest = useMemo(() => {
    const n = new Map<number, number>();
    for (const f of walk.result!.fruit) n.set(f.frame, (n.get(f.frame) ?? 0) + 1);
    let best = frames[0]?.index ?? 0;
    for (const [k, v] of n) if (v > (n.get(best) ?? 0)) best = k;
    return best;
  }, [walk.job_id]);
  const frameIndex = frameAt ?? busiest;
  const frame = frames.find((f) => f.index === frameIndex) ?? frames[0];

  const act = async (what: () => Promise<unknown>) => {
    setBusy(true);
    setProblem(undefined);
    try {
      await what();
      await load();
      setSelected(undefined);
    } catch (err) {
      setProblem(err as ApiError);
      await load().catch(() => undefined);
    } finally {
      setBusy(false);
    }
  };

  if (!data) return problem ? <ProblemBox problem={problem} /> : <Loading what="Loading the corrections" />;
  if (!frame) return <Notice>This walk has no frames to show.</Notice>;

  const inFrame = data.fruit.filter((f) => f.frame === frame.index && f.box);
  const removed = walk.result!.fruit.filter((f) => data.removed_track_ids.includes(f.track_id) && f.frame === frame.index);
  const correctionOf = (kind: Correction['kind'], track: number | null) =>
    data.corrections.find((c) => c.kind === kind && c.track_id === track);
  const countsCorrection = data.corrections.find((c) => c.kind === 'counts');
  const sel = selected
    ? selected.startsWith('t')
      ? {
          fruit: inFrame.find((f) => f.track_id === Number(selected.slice(1))),
          removed: removed.find((f) => f.track_id === Number(selected.slice(1))),
          track: Number(selected.slice(1)),
        }
      : { fruit: inFrame.find((f) => f.correction_id === selected.slice(1)), removed: undefined, track: null }
    : undefined;

  const setRipeness = (r: Ripeness) =>
    act(async () => {
      const f = sel!.fruit!;
      const existing =
        f.track_id === null ? data.corrections.find((c) => c.correction_id === f.correction_id) : correctionOf('ripeness', f.track_id);
      if (existing) await api('PATCH', `${base}/${existing.correction_id}`, { json: { ripeness: r } });
      else await api('POST', base, { json: { kind: 'ripeness', track_id: f.track_id, ripeness: r } });
    });

  return (
    <div class="corrector">
      <div class="side-by-side">
        <CountsTable model={data.model_counts} corrected={data.corrected_counts} caption="Fruit counted" />
      </div>
      <ProblemBox problem={problem} />
      <h2>Check the frames</h2>
      <div class="frame-nav">
        <button
          type="button"
          disabled={frames.indexOf(frame) <= 0}
          onClick={() => (setFrameAt(frames[frames.indexOf(frame) - 1]!.index), setSelected(undefined))}
        >
          ‹ Previous
        </button>
        <span>
          Frame {frames.indexOf(frame) + 1} of {frames.length} · {inFrame.length} fruit
        </span>
        <button
          type="button"
          disabled={frames.indexOf(frame) >= frames.length - 1}
          onClick={() => (setFrameAt(frames[frames.indexOf(frame) + 1]!.index), setSelected(undefined))}
        >
          Next ›
        </button>
      </div>
      <FrameEditor
        frame={frame}
        fruit={inFrame}
        removed={removed}
        selected={selected}
        onSelect={(k) => (setSelected(k === selected ? undefined : k), setDrawn(undefined))}
        drawing={drawing}
        onDrawn={(box) => setDrawn(box)}
      />
      <div class="tools">
        <button
          type="button"
          aria-pressed={drawing}
          class={drawing ? 'on' : ''}
          onClick={() => (setDrawing(!drawing), setSelected(undefined), setDrawn(undefined))}
        >
          {drawing ? 'Stop adding' : 'Add a missed fruit'}
        </button>
        {data.corrections.length ? (
          <button
            type="button"
            disabled={busy}
            onClick={() => act(() => api('DELETE', `${base}/${data.corrections.at(-1)!.correction_id}`))}
          >
            Undo last correction
          </button>
        ) : null}
      </div>
      {drawing && !drawn ? <p class="hint">Drag a box around the fruit on the picture.</p> : null}
      {drawn ? (
        <div class="sheet" role="group" aria-label="The fruit you drew">
          <p>What ripeness is the fruit you drew?</p>
          <div class="ripeness-buttons">
            {RIPENESS.map((r) => (
              <button
                type="button"
                key={r}
                class={`rip ${r}`}
                disabled={busy}
                onClick={() =>
                  act(async () => {
                    await api('POST', base, { json: { kind: 'add', frame_id: frame.index, box: drawn, ripeness: r } });
                    setDrawn(undefined);
                  })
                }
              >
                {r}
              </button>
            ))}
            <button type="button" onClick={() => setDrawn(undefined)}>
              Cancel
            </button>
          </div>
        </div>
      ) : null}
      {sel && (sel.fruit || sel.removed) ? (
        <div class="sheet" role="group" aria-label="The fruit you tapped">
          {sel.removed ? (
            <>
              <p>Fruit {sel.track} was removed from the count.</p>
              <button
                type="button"
                disabled={busy}
                onClick={() => act(() => api('DELETE', `${base}/${correctionOf('remove', sel.track)!.correction_id}`))}
              >
                Put it back
              </button>
            </>
          ) : (
            <>
              <p>
                {sel.fruit!.track_id === null ? 'A fruit you added' : `Fruit ${sel.fruit!.track_id}`}:{' '}
                <strong>{sel.fruit!.ripeness}</strong>
                {sel.fruit!.model_ripeness && sel.fruit!.model_ripeness !== sel.fruit!.ripeness
                  ? ` (the model said ${sel.fruit!.model_ripeness})`
                  : ''}
              </p>
              <div class="ripeness-buttons">
                {RIPENESS.map((r) => (
                  <button
                    type="button"
                    key={r}
                    class={`rip ${r}`}
                    disabled={busy || r === sel.fruit!.ripeness}
                    onClick={() => setRipeness(r)}
                  >
                    {r}
                  </button>
                ))}
                <button
                  type="button"
                  class="danger"
                  disabled={busy}
                  onClick={() =>
                    act(() =>
                      sel.fruit!.track_id === null
                        ? api('DELETE', `${base}/${sel.fruit!.correction_id}`)
                        : api('POST', base, { json: { kind: 'remove', track_id: sel.fruit!.track_id } }),
                    )
                  }
                >
                  {sel.fruit!.track_id === null ? 'Remove (undo the add)' : 'Not a fruit: remove'}
                </button>
                {sel.fruit!.track_id !== null && sel.fruit!.correction_id ? (
                  <button type="button" disabled={busy} onClick={() => act(() => api('DELETE', `${base}/${sel.fruit!.correction_id}`))}>
                    Undo its correction
                  </button>
                ) : null}
              </div>
            </>
          )}
        </div>
      ) : null}
      <h3>Fruit in this frame</h3>
      <ul class="fruit-list">
        {inFrame.map((f) => {
          const key = f.track_id !== null ? `t${f.track_id}` : `c${f.correction_id}`;
          return (
            <li key={key}>
              <button
                type="button"
                aria-pressed={selected === key}
                onClick={() => (setSelected(selected === key ? undefined : key), setDrawing(false))}
              >
                <span class={`dot ${f.ripeness}`} aria-hidden="true" /> {f.track_id ?? 'added'} · {f.ripeness}
              </button>
            </li>
          );
        })}
        {removed.map((f) => (
          <li key={`r${f.track_id}`}>
            <button type="button" aria-pressed={selected === `t${f.track_id}`} onClick={() => setSelected(`t${f.track_id}`)}>
              {f.track_id} · removed
            </button>
          </li>
        ))}
      </ul>
      <details class="edit">
        <summary>Set the counts by hand</summary>
        <CountsForm
          base={base}
          existing={countsCorrection}
          corrected={data.corrected_counts}
          onDone={() => void load()}
          key={countsCorrection?.correction_id ?? 'new'}
        />
      </details>
      <h2>Frames with the model's boxes</h2>
      <ul class="strip">
        {frames.slice(stripOffset, stripOffset + 12).map((f) => (
          <li key={f.index}>
            <button
              type="button"
              class={f.index === frame.index ? 'current' : ''}
              onClick={() => (setFrameAt(f.index), setSelected(undefined), window.scrollTo({ top: 0 }))}
            >
              <img
                src={f.overlay_url}
                loading="lazy"
                width={f.width}
                height={f.height}
                alt={`Frame ${frames.indexOf(f) + 1} with the model's boxes`}
              />
            </button>
          </li>
        ))}
      </ul>
      <Pager offset={stripOffset} limit={12} total={frames.length} onPage={setStripOffset} what="frames" />
      <h2>Corrections ({data.corrections.length})</h2>
      {data.corrections.length ? (
        <ol class="list corrections">
          {data.corrections.map((c) => (
            <li key={c.correction_id}>
              <span>
                {c.kind === 'ripeness'
                  ? `Fruit ${c.track_id} is ${c.ripeness}`
                  : c.kind === 'remove'
                    ? `Fruit ${c.track_id} removed`
                    : c.kind === 'add'
                      ? `A ${c.ripeness} fruit added in frame ${(c.frame_id ?? 0) + 1}`
                      : `Counts set: ${Object.entries(c.counts ?? {})
                          .map(([k, v]) => `${v} ${k}`)
                          .join(', ')}`}
              </span>
              <button type="button" disabled={busy} onClick={() => act(() => api('DELETE', `${base}/${c.correction_id}`))}>
                Undo
              </button>
            </li>
          ))}
        </ol>
      ) : (
        <p class="empty">No correction yet: the model's counts stand.</p>
      )}
    </div>
  );
}

export function WalkScreen({ walkId }: { walkId: string }) {
  const { walk, problem } = usePolledWalk(walkId);
  if (!walk) return problem ? <ProblemBox problem={problem} /> : <Loading what="Loading the walk" />;
  const cycleLink =
    walk.cycle_id && walk.farm_id && walk.greenhouse_id && walk.row_id
      ? pathOf('cycle', { farm: walk.farm_id, greenhouse: walk.greenhouse_id, row: walk.row_id, cycle: walk.cycle_id })
      : undefined;
  return (
    <section>
      <nav class="crumbs" aria-label="Where you are">
        <ol>
          <li>
            <Link href="/">Farms</Link>
          </li>
          {cycleLink ? (
            <li>
              <Link href={cycleLink}>The crop cycle</Link>
            </li>
          ) : null}
        </ol>
      </nav>
      <h1>Walk{walk.week ? ` of ${weekName(walk.week)}` : ''}</h1>
      {problem ? <ProblemBox problem={problem} /> : null}
      {walk.status === 'queued' || walk.status === 'running' ? <Scoring walk={walk} /> : null}
      {walk.status === 'failed' ? (
        <Notice tone="warn">
          <p>This walk could not be counted: {walk.error ?? 'no reason given'}.</p>
          <p>Film it again (slower, in good light), or ask the installer to look at the box's log.</p>
        </Notice>
      ) : null}
      {walk.status === 'done' && walk.result ? (
        <>
          {walk.result.quality.warnings.length ? (
            <Notice tone="warn">
              <ul>
                {walk.result.quality.warnings.map((w) => (
                  <li key={w.code}>{w.message}</li>
                ))}
              </ul>
            </Notice>
          ) : null}
          <Corrector walk={walk} />
        </>
      ) : null}
    </section>
  );
}
