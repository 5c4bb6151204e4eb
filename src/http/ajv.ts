import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { IANAZone } from 'luxon';

// ajv's CJS build exposes the class as `default` under NodeNext.
const Ajv2020 = Ajv2020Module.default ?? Ajv2020Module;
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: unknown, formats: string[]) => void;

/**
 * The single ajv instance. JSON Schema 2020-12 is what OpenAPI 3.1 embeds, so the
 * schemas that validate requests are the ones the OpenAPI document publishes.
 * Coercion of types is on for path, query and header values only (they arrive as
 * strings); bodies are validated by a separate instance without coercion.
 */
function build(coerce: boolean) {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
  });
  addFormats(ajv, ['date', 'date-time', 'uuid', 'email', 'uri']);
  ajv.addFormat('iana-zone', { type: 'string', validate: (s: string) => IANAZone.isValidZone(s) });
  ajv.addKeyword({ keyword: 'x-unit', schemaType: 'string' });
  return ajv;
}

export const bodyAjv = build(false);
export const paramAjv = build(true);
