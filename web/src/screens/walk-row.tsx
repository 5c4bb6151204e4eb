// Walk a row: film or pick a clip or photo, choose the week (this week by default), upload with a
// progress bar; the walk's own page then shows the scoring, the counts and the frames.
import { useRef, useState } from 'preact/hooks';
import { ApiError, randomId, upload } from '../api';
import { navigate } from '../router';
import { pathOf } from '../routes';
import { apiPath } from '../tree';
import { useSession } from '../session';
import { thisWeek, weekName } from '../weeks';
import { bodySchema, validate } from '../schema';
import { Field, Input, ProblemBox, ProgressBar } from '../ui';
import { cycleIds, Crumbs, WithPlace, type Ids } from './common';

const MAX_CLIPS = 12;

function UploadForm({ url, zone }: { url: string; zone: string }) {
  const [week, setWeek] = useState(thisWeek(zone));
  const [files, setFiles] = useState<File[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<ApiError>();
  const [share, setShare] = useState<number>();
  const abort = useRef<() => void>();
  // One key per choice of files: sending the same walk again (a dropped connection) answers the same walk.
  const idem = useRef(randomId());

  const send = async () => {
    setProblem(undefined);
    const errs: Record<string, string> = {};
    const op = files.length > 1 ? 'create_cycle_video_batch' : 'create_cycle_video';
    // The files are checked here (the schema only says they are required), the week as the API checks it.
    for (const p of validate(await bodySchema(op), { week })) if (p.name === 'week') errs.week = p.message;
    if (!files.length) errs.file = 'Choose a clip or a photo first.';
    if (files.length > MAX_CLIPS) errs.file = `At most ${MAX_CLIPS} clips make one walk.`;
    setErrors(errs);
    if (Object.keys(errs).length) return;
    const form = new FormData();
    form.append('week', week);
    for (const f of files) form.append(files.length > 1 ? 'files' : 'file', f, f.name);
    setShare(0);
    const req = upload<{ job_id: string }>(files.length > 1 ? `${url}/videos/batch` : `${url}/videos`, form, setShare, {
      'Idempotency-Key': idem.current,
    });
    abort.current = req.abort;
    try {
      const walk = await req.done;
      navigate(pathOf('walk', { walk: walk.job_id }));
    } catch (err) {
      const e = err as ApiError;
      if (e.status === 422 && e.errors.length)
        setErrors(Object.fromEntries(e.errors.map((x) => [x.name === 'files' ? 'file' : x.name, x.message])));
      else setProblem(e);
      setShare(undefined);
    }
  };

  return (
    <form
      class="form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <div class="fields">
        <Field
          id="walk-file"
          label="Clip or photo of the row"
          error={errors.file}
          hint="Film walking slowly along the row, the camera at fruit height. Up to 12 clips make one walk."
        >
          <input
            id="walk-file"
            class="file"
            type="file"
            accept="video/*,image/*"
            capture="environment"
            multiple
            aria-invalid={errors.file ? true : undefined}
            aria-describedby={errors.file ? 'walk-file-error' : 'walk-file-hint'}
            onChange={(e) => {
              setFiles(Array.from(e.currentTarget.files ?? []));
              idem.current = randomId();
              setErrors((x) => ({ ...x, file: '' }));
            }}
          />
        </Field>
        {files.length ? (
          <p class="chosen">
            {files.length === 1 ? files[0]!.name : `${files.length} clips`} · {(files.reduce((s, f) => s + f.size, 0) / 1e6).toFixed(1)} MB
          </p>
        ) : null}
        <Field id="walk-week" label="Week" error={errors.week} hint={`This week is ${weekName(thisWeek(zone))}.`}>
          <Input def={{ name: 'week', label: 'Week', kind: 'week' }} id="walk-week" value={week} error={errors.week} onValue={setWeek} />
        </Field>
      </div>
      <ProblemBox problem={problem} />
      {share !== undefined ? <ProgressBar label="Uploading" share={share} /> : null}
      <div class="actions">
        <button type="submit" class="primary" disabled={share !== undefined}>
          {share !== undefined ? 'Uploading…' : 'Upload and count'}
        </button>
        {share !== undefined ? (
          <button type="button" onClick={() => abort.current?.()}>
            Stop
          </button>
        ) : null}
      </div>
    </form>
  );
}

export function WalkRowScreen({ ids }: { ids: Ids }) {
  const { organization_id: org } = useSession();
  return (
    <WithPlace ids={ids} need="cycle">
      {(place) => {
        const at = cycleIds(place);
        return (
          <section>
            <Crumbs place={place} />
            <h1>Walk {place.row!.name}</h1>
            <UploadForm url={apiPath.cycle(org, at.farm, at.greenhouse, at.row, at.cycle)} zone={place.greenhouse!.time_zone} />
          </section>
        );
      }}
    </WithPlace>
  );
}
