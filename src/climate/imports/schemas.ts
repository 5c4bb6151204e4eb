import type { JsonSchema, ObjectSchema } from '../../http/route.js';
import { CLIMATE_METRICS } from '../metrics.js';
import { importSchema } from './presenters.js';

const metricNames = CLIMATE_METRICS.map((m) => m.name);
export const MAX_COLUMN_CHOICES = 2000;

const problemList = (what: string): JsonSchema => ({
  type: 'array',
  description: what,
  items: {
    type: 'object',
    required: ['code', 'message'],
    properties: {
      code: {
        type: 'string',
        description: 'Stable snake_case code, e.g. line_too_long, too_many_columns, no_time_column, mapping_mismatch, dst_repeated_hour.',
      },
      message: { type: 'string' },
      count: { type: 'integer' },
      rows: { type: 'array', items: { type: 'integer' }, description: '1-based file rows.' },
      column: { type: 'integer', description: '0-based column index.' },
    },
  },
});

export const columnChoicesSchema: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_COLUMN_CHOICES,
  items: {
    type: 'object',
    required: ['column', 'metric'],
    additionalProperties: false,
    properties: {
      column: {
        anyOf: [
          { type: 'string', minLength: 1, maxLength: 1000 },
          { type: 'integer', minimum: 0, maximum: 100_000 },
        ],
        description: 'The column: its header text as the preview reports it, or its 0-based index.',
      },
      metric: { enum: metricNames, description: 'Metric the column holds.' },
      unit: {
        type: 'string',
        minLength: 1,
        maxLength: 32,
        description:
          "Unit of the file's values (°F, K, µS/cm, klux, ...); left out, the unit in the header, else the metric's canonical unit.",
      },
    },
  },
};

export const confirmedMappingSchema: JsonSchema = {
  type: 'object',
  required: ['version', 'fingerprint', 'time', 'date_order', 'compartment', 'columns'],
  additionalProperties: false,
  properties: {
    version: { const: 1 },
    fingerprint: {
      type: 'string',
      maxLength: 200,
      description: 'Identifies the header rows the mapping was made for; a file with other headers does not fit.',
    },
    time: {
      type: 'object',
      required: ['kind'],
      additionalProperties: false,
      properties: {
        kind: { enum: ['single', 'date_time', 'period'] },
        column: { type: 'integer', minimum: 0 },
        date_column: { type: 'integer', minimum: 0 },
        time_column: { type: 'integer', minimum: 0 },
        start_column: { type: 'integer', minimum: 0 },
        end_column: { type: 'integer', minimum: 0 },
        stamp: { const: 'start' },
      },
    },
    date_order: { enum: ['ymd', 'dmy', 'mdy'] },
    compartment: { type: ['string', 'null'], maxLength: 200 },
    columns: {
      type: 'array',
      maxItems: MAX_COLUMN_CHOICES,
      items: {
        type: 'object',
        required: ['index', 'header', 'metric', 'unit'],
        additionalProperties: false,
        properties: {
          index: { type: 'integer', minimum: 0 },
          header: { type: 'string', maxLength: 2000 },
          metric: { enum: metricNames },
          unit: { type: 'string', maxLength: 32 },
        },
      },
    },
  },
};

const formFields = {
  compartment: {
    type: 'string',
    minLength: 1,
    maxLength: 200,
    description: 'Compartment to read when the file holds several (e.g. "afd 4"); detection only.',
  },
  date_order: { enum: ['dmy', 'mdy'], description: 'Order of day and month in dates like 03/04/2026 when the file does not settle it.' },
  sheet: {
    type: 'string',
    minLength: 1,
    maxLength: 31,
    description:
      "The .xlsx workbook's sheet to read, by name (at most 31 characters, as Excel allows). Left out, every sheet's first rows are read and the one whose time column and columns read best is taken; `layout.sheet` names it and `layout.other_sheets` the others with why. A name the workbook does not have, or a text file, is a blocking problem `unknown_sheet`.",
  },
  columns: {
    type: 'string',
    maxLength: 200_000,
    description: `JSON text: the columns you name, [{"column": "<header or 0-based index>", "metric": "air_temperature", "unit": "°F"}], at most ${MAX_COLUMN_CHOICES}. Wins over mapping and detection; only these columns are read.`,
  },
  mapping: {
    type: 'string',
    maxLength: 250_000,
    description:
      'JSON text: the `mapping` a preview answered, as confirmed. Used when `columns` is absent; columns outside it are not imported. A file with other header rows does not fit it (400).',
  },
};

export const csvFormSchema: ObjectSchema = { type: 'object', additionalProperties: false, properties: { ...formFields } };
export const fileFormSchema: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...formFields,
    remember: {
      type: 'boolean',
      default: false,
      description:
        "true: save the mapping used as the greenhouse's column choices (for ingest and the watched folder), replacing any saved before.",
    },
  },
};

const analysisProperties = {
  file_name: { type: ['string', 'null'] },
  layout: {
    type: 'object',
    description:
      "What the reader found: kind (csv or xlsx), encoding, delimiter, decimal mark, the sheet read (`sheet`, null for text) and the workbook's other sheets with why they were not read (`other_sheets`: [{name, reason}]), header rows and their roles, how time is read (`time`), date format and order, data rows, trailing rows dropped, compartments.",
  },
  columns: {
    type: 'array',
    description:
      'Every column: header, compartment, the metric it reads as, the unit of its values, the canonical unit, the conversion applied, a confidence from 0 to 1 with the reason, whether it is a setpoint, and whether it is imported (`selected`).',
    items: {
      type: 'object',
      required: ['index', 'header', 'metric', 'unit', 'conversion', 'confidence', 'selected'],
      properties: {
        index: { type: 'integer', description: '0-based column index.' },
        header: { type: 'string', description: 'Header text (name, compartment and unit cells joined).' },
        metric: { type: ['string', 'null'], description: 'Metric the column reads as; null when not recognised.' },
        unit: { type: ['string', 'null'], description: "Unit of the file's values." },
        canonical_unit: { type: ['string', 'null'], description: "The metric's canonical unit, what is stored." },
        conversion: {
          type: ['string', 'null'],
          description: 'Conversion applied to reach the canonical unit, e.g. "°F → °C"; null when none.',
        },
        confidence: { type: 'number', minimum: 0, maximum: 1, description: 'How sure the detection is, 0 to 1.' },
        reason: { type: 'string' },
        setpoint: { type: 'boolean', description: 'A value the climate computer aimed for, not one it measured.' },
        compartment: { type: ['string', 'null'] },
        selected: { type: 'boolean', description: 'Whether the column is imported.' },
      },
    },
  },
  time_zone: {
    type: 'string',
    description:
      'The clock the file is read on: the greenhouse time zone. Times without an offset are wall-clock times there; repeated autumn hours and missing spring hours are reported in warnings.',
  },
  time_range: {
    type: ['object', 'null'],
    description: 'First and last instant in the file, ISO 8601 with offset.',
    properties: { from: { type: 'string' }, to: { type: 'string' } },
  },
  first_rows: {
    type: 'array',
    description: 'The first rows as they would be stored: `at` (ISO with offset) and `values` per metric in canonical units.',
    items: { type: 'object' },
  },
  warnings: problemList(
    'Things the import handles but you should know (rows skipped and why, columns not recognised, daylight-saving hours).',
  ),
  blocking: problemList(
    'Problems that stop the import (400 on upload) until fixed: no time column, a line too long, too many columns, a mapping that does not fit...',
  ),
  mapping: {
    type: ['object', 'null'],
    description:
      'The mapping to confirm: send it back as the `mapping` field (or save it with remember=true). Null while there are blocking problems.',
  },
  stats: {
    type: 'object',
    description:
      'Rows read, data rows, values, skipped values by reason and column, rows without a time, daylight-saving repeats and gaps.',
  },
};

export const csvPreviewSchema: JsonSchema = {
  type: 'object',
  required: Object.keys(analysisProperties),
  properties: analysisProperties,
};

export const filePreviewSchema: JsonSchema = {
  type: 'object',
  required: [...Object.keys(analysisProperties), 'first_hours', 'already_stored'],
  properties: {
    ...analysisProperties,
    first_hours: {
      type: 'array',
      description:
        'The first 24 hours as the import would store them: `hour` (start of the hour, ISO with offset) and `values` per metric (means for states, sums for amounts, circular means for directions) in canonical units.',
      items: {
        type: 'object',
        required: ['hour', 'values'],
        properties: { hour: { type: 'string' }, values: { type: 'object', additionalProperties: { type: 'number' } } },
      },
    },
    already_stored: {
      type: 'array',
      description:
        "Readings this cycle already holds in the file's time range, per metric: the import updates those hours, never doubles them.",
      items: {
        type: 'object',
        required: ['metric', 'readings'],
        properties: { metric: { type: 'string' }, readings: { type: 'integer' } },
      },
    },
  },
};

export const importResultSchema: JsonSchema = {
  ...importSchema,
  required: [...importSchema.required, 'remembered'],
  properties: {
    ...importSchema.properties,
    remembered: { type: 'boolean', description: "Whether the mapping was saved as the greenhouse's column choices." },
  },
};
