// Forms check what they send against the request schemas of the box's own /openapi.json (the
// document the API validates with), so a form refuses exactly what the API would refuse and says
// so at the field before sending. The box still validates: its 422 lands at the same fields.

/** One failing field, as the box's 422 names it (conventions.md): `kg`, `rows.3.fruits`. */
export interface FieldProblem {
  in?: string;
  name: string;
  message: string;
}

type Schema = Record<string, any>;

let doc: Promise<Schema | undefined> | undefined;

/** The OpenAPI document, fetched once, on the first form that asks (about 70 kB on the wire). */
export function openApi(): Promise<Schema | undefined> {
  doc ??= fetch('/openapi.json', { credentials: 'same-origin' })
    .then((r) => (r.ok ? (r.json() as Promise<Schema>) : undefined))
    .catch(() => {
      doc = undefined; // try again with the next form
      return undefined;
    });
  return doc;
}

/** The request body schema of an operation (JSON or multipart), or undefined when unknown. */
export async function bodySchema(operationId: string): Promise<Schema | undefined> {
  const d = await openApi();
  if (!d) return undefined;
  for (const item of Object.values(d.paths ?? {}) as Schema[]) {
    for (const op of Object.values(item) as Schema[]) {
      if (op?.operationId !== operationId) continue;
      const content = op.requestBody?.content ?? {};
      return (content['application/json'] ?? content['multipart/form-data'])?.schema;
    }
  }
  return undefined;
}

/** Whether the operation's body takes a field (e.g. a cycle's area_m2, which a later release adds). */
export async function takesField(operationId: string, field: string): Promise<boolean> {
  const s = await bodySchema(operationId);
  return !!s?.properties && field in s.properties;
}

function typesOf(s: Schema): string[] {
  return s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
}

function typeOk(t: string, v: unknown): boolean {
  switch (t) {
    case 'null':
      return v === null;
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
    default:
      return true;
  }
}

function validZone(z: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: z });
    return true;
  } catch {
    return false;
  }
}

function validDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const d = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!));
  return d.getUTCFullYear() === +m[1]! && d.getUTCMonth() === +m[2]! - 1 && d.getUTCDate() === +m[3]!;
}

const fmt = (n: number) => String(n);

/** Problems of `value` against `schema`, one per field, named as the box names them (rows.3.fruits). */
export function validate(schema: Schema | undefined, value: unknown, name = ''): FieldProblem[] {
  if (!schema || value === undefined) return [];
  const out: FieldProblem[] = [];
  const add = (message: string, at = name) => out.push({ in: 'body', name: at || '(body)', message });
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (alternatives) {
    const results = (alternatives as Schema[]).map((s) => validate(s, value, name));
    return results.some((r) => r.length === 0) ? [] : results[0]!;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    add(`must be one of: ${schema.enum.filter((e: unknown) => e !== null).join(', ')}`);
    return out;
  }
  const types = typesOf(schema);
  if (types.length && !types.some((t) => typeOk(t, value))) {
    const want = types.filter((t) => t !== 'null');
    add(
      want.includes('integer') ? 'must be a whole number' : want.includes('number') ? 'must be a number' : `must be ${want.join(' or ')}`,
    );
    return out;
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) add(`must be at least ${fmt(schema.minimum)}`);
    if (schema.maximum !== undefined && value > schema.maximum) add(`must be at most ${fmt(schema.maximum)}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum) add(`must be more than ${fmt(schema.exclusiveMinimum)}`);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum) add(`must be less than ${fmt(schema.exclusiveMaximum)}`);
  }
  if (typeof value === 'string') {
    const len = [...value].length;
    if (schema.minLength !== undefined && len < schema.minLength)
      add(schema.minLength === 1 ? 'is required' : `must be at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && len > schema.maxLength) add(`must be at most ${schema.maxLength} characters`);
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(value)) add('is not in the expected form');
    if (schema.format === 'date' && !validDate(value)) add('must be a date (YYYY-MM-DD)');
    if (schema.format === 'iana-zone' && !validZone(value)) add('must be a time zone such as Europe/Amsterdam');
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) add(`needs at least ${schema.minItems}`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) add(`takes at most ${schema.maxItems}`);
    if (schema.items) value.forEach((v, i) => out.push(...validate(schema.items, v, name ? `${name}.${i}` : String(i))));
  }
  if (typeOk('object', value) && (schema.properties || schema.required)) {
    const obj = value as Record<string, unknown>;
    for (const r of schema.required ?? []) if (obj[r] === undefined) add('is required', name ? `${name}.${r}` : r);
    for (const [k, v] of Object.entries(obj)) {
      const sub = schema.properties?.[k];
      if (sub) out.push(...validate(sub, v, name ? `${name}.${k}` : k));
    }
  }
  return out;
}
