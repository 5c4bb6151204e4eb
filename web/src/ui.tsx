// Building blocks shared by the screens: fields that show the box's problem at the field, forms that
// keep what was typed whatever happens, progress bars, pagers and the counts by ripeness.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, type Counts, type FieldProblem } from './api';
import { bodySchema, validate } from './schema';

export type Kind = 'text' | 'number' | 'integer' | 'date' | 'week' | 'datetime' | 'textarea' | 'select' | 'zone' | 'secret';

export interface FieldDef {
  name: string;
  label: string;
  kind?: Kind;
  options?: [string, string][];
  hint?: string;
  unit?: string;
  required?: boolean;
}

export type Values = Record<string, string>;

let seq = 0;
const uid = (p: string) => `${p}-${++seq}`;

/** A labelled control with its hint and its problem, tied together for screen readers. */
export function Field(props: { id: string; label: string; hint?: string; error?: string; unit?: string; children: ComponentChildren }) {
  return (
    <div class={`field${props.error ? ' has-error' : ''}`}>
      <label for={props.id}>
        {props.label}
        {props.unit ? <span class="unit"> ({props.unit})</span> : null}
      </label>
      {props.children}
      {props.hint ? (
        <p class="hint" id={`${props.id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p class="error" id={`${props.id}-error`} role="alert">
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

let zones: string[] | undefined;
function timeZones(): string[] {
  zones ??= (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  return zones;
}

/** The input of a field definition. Numbers are typed as text so a decimal comma or a slip is kept and explained, not dropped. */
export function Input(props: { def: FieldDef; id: string; value: string; error?: string; onValue: (v: string) => void }) {
  const { def, id, value, error, onValue } = props;
  const described = [def.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name: def.name,
    value,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': described,
    required: def.required,
    onInput: (e: JSX.TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>) => onValue(e.currentTarget.value),
  };
  switch (def.kind) {
    case 'textarea':
      return <textarea {...common} rows={3} />;
    case 'select':
      return (
        <select {...common}>
          {(def.options ?? []).map(([v, l]) => (
            <option value={v} key={v}>
              {l}
            </option>
          ))}
        </select>
      );
    case 'number':
      return <input {...common} type="text" inputMode="decimal" autoComplete="off" />;
    case 'integer':
      return <input {...common} type="text" inputMode="numeric" autoComplete="off" />;
    case 'date':
      return <input {...common} type="date" />;
    case 'week':
      return <input {...common} type="week" placeholder="2026-W07" />;
    case 'datetime':
      return <input {...common} type="datetime-local" />;
    case 'secret':
      return <input {...common} type="password" autoComplete="off" spellcheck={false} />;
    case 'zone':
      return (
        <>
          <input {...common} type="text" list={`${id}-zones`} autoComplete="off" spellcheck={false} />
          <datalist id={`${id}-zones`}>
            {timeZones().map((z) => (
              <option value={z} key={z} />
            ))}
          </datalist>
        </>
      );
    default:
      return <input {...common} type="text" />;
  }
}

export function toNumber(raw: string): number | string {
  const s = raw.trim().replace(',', '.');
  if (s === '') return '';
  const n = Number(s);
  return Number.isFinite(n) ? n : raw;
}

/** Turns typed values into a request body: numbers as numbers, empty fields left out (or cleared with null when editing). */
export function bodyOf(fields: FieldDef[], values: Values, initial: Values | undefined): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of fields) {
    const raw = values[f.name] ?? '';
    if (initial && raw === (initial[f.name] ?? '')) continue; // editing: only what changed
    if (raw.trim() === '') {
      if (initial) body[f.name] = null;
      continue;
    }
    body[f.name] = f.kind === 'number' || f.kind === 'integer' ? toNumber(raw) : f.kind === 'secret' ? raw : raw.trim();
  }
  return body;
}

export interface FormState {
  values: Values;
  set: (name: string, value: string) => void;
  setAll: (v: Values) => void;
  errors: Record<string, string>;
  formError?: ApiError | { detail: string; errors?: FieldProblem[] };
  busy: boolean;
  done?: string;
  submit: (send: () => Promise<unknown>, body?: unknown) => Promise<boolean>;
  clear: () => void;
}

/**
 * A form's values, problems and progress. `submit` checks the body against the operation's request
 * schema first (as the box would), then sends; a refusal puts each problem at its field and keeps
 * every value as typed.
 */
export function useForm(operationId: string | undefined, initial: Values = {}, fieldNames?: string[]): FormState {
  const [values, setValues] = useState<Values>(initial);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<FormState['formError']>();
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string>();
  useEffect(() => {
    if (operationId) void bodySchema(operationId);
  }, [operationId]);
  const place = (problems: FieldProblem[], detail: string) => {
    const at: Record<string, string> = {};
    const rest: FieldProblem[] = [];
    for (const p of problems) {
      const name = p.name;
      if (!fieldNames || fieldNames.includes(name) || fieldNames.some((f) => name.startsWith(`${f}.`))) at[name] = at[name] ?? p.message;
      else rest.push(p);
    }
    setErrors(at);
    setFormError(rest.length || !Object.keys(at).length ? { detail, errors: rest } : undefined);
  };
  return {
    values,
    set: (name, value) => {
      setValues((v) => ({ ...v, [name]: value }));
      setDone(undefined);
      if (errors[name]) setErrors((e) => ({ ...e, [name]: '' }));
    },
    setAll: (v) => setValues(v),
    errors,
    formError,
    busy,
    done,
    clear: () => {
      setErrors({});
      setFormError(undefined);
    },
    async submit(send, body) {
      setDone(undefined);
      if (operationId && body !== undefined) {
        const problems = validate(await bodySchema(operationId), body);
        if (problems.length) {
          place(problems, 'Please check the fields marked below.');
          return false;
        }
      }
      setBusy(true);
      try {
        await send();
        setErrors({});
        setFormError(undefined);
        setDone('Saved.');
        return true;
      } catch (err) {
        if (err instanceof ApiError) {
          if (err.status === 422 && err.errors.length) place(err.errors, err.detail);
          else {
            setErrors({});
            setFormError(err);
          }
        } else setFormError({ detail: String((err as Error).message ?? err) });
        return false;
      } finally {
        setBusy(false);
      }
    },
  };
}

/** The problem a form or a screen met, in plain words; 409s carry what the box said to do. */
export function ProblemBox({ problem }: { problem?: FormState['formError'] }) {
  if (!problem) return null;
  const errors = problem.errors ?? [];
  return (
    <div class="problem" role="alert">
      <p>{problem.detail}</p>
      {errors.length ? (
        <ul>
          {errors.map((e) => (
            <li key={e.name}>
              <strong>{e.name}</strong> {e.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A form from field definitions. */
export function Form(props: {
  form: FormState;
  fields: FieldDef[];
  submitLabel: string;
  onSubmit: () => void;
  children?: ComponentChildren;
  extra?: ComponentChildren;
  class?: string;
}) {
  const { form, fields } = props;
  const ids = useMemo(() => Object.fromEntries(fields.map((f) => [f.name, uid(f.name)])), [fields.map((f) => f.name).join()]);
  return (
    <form
      class={props.class ?? 'form'}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      <div class="fields">
        {fields.map((f) => (
          <Field key={f.name} id={ids[f.name]!} label={f.label} hint={f.hint} unit={f.unit} error={form.errors[f.name]}>
            <Input
              def={f}
              id={ids[f.name]!}
              value={form.values[f.name] ?? ''}
              error={form.errors[f.name]}
              onValue={(v) => form.set(f.name, v)}
            />
          </Field>
        ))}
        {props.children}
      </div>
      <ProblemBox problem={form.formError} />
      <div class="actions">
        <button type="submit" class="primary" disabled={form.busy}>
          {form.busy ? 'Saving…' : props.submitLabel}
        </button>
        {props.extra}
        {form.done ? (
          <span class="saved" role="status">
            {form.done}
          </span>
        ) : null}
      </div>
    </form>
  );
}

export function ProgressBar({ label, share }: { label: string; share: number | undefined }) {
  const pct = share === undefined ? undefined : Math.round(share * 100);
  return (
    <div class="progress">
      <span>
        {label}
        {pct === undefined ? '' : ` ${pct} %`}
      </span>
      <progress max={100} value={pct} aria-label={label} />
    </div>
  );
}

export function Pager(props: { offset: number; limit: number; total: number; onPage: (offset: number) => void; what?: string }) {
  const { offset, limit, total } = props;
  if (total <= limit && offset === 0) return null;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={`Pages of ${props.what ?? 'the list'}`}>
      <button type="button" disabled={offset === 0} onClick={() => props.onPage(Math.max(0, offset - limit))}>
        ‹ Newer
      </button>
      <span>
        {total ? offset + 1 : 0}–{last} of {total}
      </span>
      <button type="button" disabled={last >= total} onClick={() => props.onPage(offset + limit)}>
        Older ›
      </button>
    </nav>
  );
}

/** A list kept in memory, shown a page at a time (for lists the box answers whole). */
export function usePage<T>(items: T[], size = 20): { page: T[]; pager: JSX.Element | null } {
  const [offset, setOffset] = useState(0);
  useEffect(() => {
    if (offset >= items.length && offset > 0) setOffset(0);
  }, [items.length]);
  return {
    page: items.slice(offset, offset + size),
    pager: <Pager offset={offset} limit={size} total={items.length} onPage={setOffset} />,
  };
}

export const RIPENESS = ['green', 'turning', 'red'] as const;
export type Ripeness = (typeof RIPENESS)[number];

export function CountsTable({ model, corrected, caption }: { model: Counts | null; corrected?: Counts | null; caption?: string }) {
  const rows: (keyof Counts)[] = ['green', 'turning', 'red', 'total'];
  return (
    <table class="counts">
      {caption ? <caption>{caption}</caption> : null}
      <thead>
        <tr>
          <th scope="col">Ripeness</th>
          <th scope="col">Model</th>
          {corrected !== undefined ? <th scope="col">Corrected</th> : null}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r} class={`r-${r}`}>
            <th scope="row">
              {r !== 'total' ? <span class={`dot ${r}`} aria-hidden="true" /> : null}
              {r}
            </th>
            <td data-testid={`model-${r}`}>{model ? model[r] : '–'}</td>
            {corrected !== undefined ? (
              <td data-testid={`corrected-${r}`} class={corrected && model && corrected[r] !== model[r] ? 'changed' : ''}>
                {corrected ? corrected[r] : '–'}
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="loading" role="status">
      {what}…
    </p>
  );
}

export function Notice({ children, tone = 'info' }: { children: ComponentChildren; tone?: 'info' | 'warn' }) {
  return <div class={`notice ${tone}`}>{children}</div>;
}

/** Loads data for a screen; `reload` reads it again. Errors stay on the screen, in words. */
export function useLoad<T>(
  load: (signal: AbortSignal) => Promise<T>,
  deps: unknown[],
): { data?: T; error?: ApiError; reload: () => void; loading: boolean } {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [n, setN] = useState(0);
  const first = useRef(true);
  useEffect(() => {
    const ctl = new AbortController();
    if (!first.current) setState((s) => ({ ...s, loading: true }));
    first.current = false;
    load(ctl.signal).then(
      (data) => !ctl.signal.aborted && setState({ data, loading: false }),
      (error) =>
        !ctl.signal.aborted &&
        setState({ error: error instanceof ApiError ? error : new ApiError(0, 'error', String(error)), loading: false }),
    );
    return () => ctl.abort();
  }, [...deps, n]);
  return { ...state, reload: () => setN((x) => x + 1) };
}

export const fmtNumber = (n: number | null | undefined, digits = 1) =>
  n === null || n === undefined || !Number.isFinite(n) ? '–' : n.toLocaleString('en-GB', { maximumFractionDigits: digits });

export function fmtInstant(iso: string | null | undefined): string {
  if (!iso) return '–';
  // The box answers instants on the greenhouse clock with their offset: show that wall-clock time.
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]}` : iso;
}
