import { presentInstant } from '../../time/instants.js';
import { climateMetric, CLIMATE_METRICS } from '../metrics.js';
import type { ClimateReading } from './tables.js';

const metricNames = CLIMATE_METRICS.map((m) => m.name);
const metricList = CLIMATE_METRICS.map((m) => `\`${m.name}\` (${m.unit}, ${m.range[0]} to ${m.range[1]})`).join(', ');

export const METRIC_DESCRIPTION = `Climate metric, one of: ${metricList}. In brackets, the metric's canonical unit (values are stored and answered in it) and its plausible range in that unit (a value outside is refused).`;

export const readingSchema = {
  type: 'object',
  required: ['point_id', 'organization_id', 'cycle_id', 'metric', 'value', 'unit', 'at', 'source', 'created_at', 'updated_at', 'version'],
  properties: {
    point_id: {
      type: 'string',
      description:
        "Reading id: a UUIDv7 made from the reading's key, its time field the reading's instant and its other bits a hash of the cycle and the metric. The same reading has the same id on every box; a reading moved to another instant takes the id of that instant.",
    },
    organization_id: { type: 'string' },
    cycle_id: { type: 'string' },
    metric: { enum: metricNames, description: METRIC_DESCRIPTION },
    value: { type: 'number', description: 'The value in the canonical unit of the metric (see `unit`).' },
    unit: { type: 'string', description: 'Canonical unit of the metric, e.g. °C, %, ppm, W/m², µmol/m²/s, J/cm², kPa, mS/cm.' },
    at: {
      type: 'string',
      description: 'Instant of the reading on the greenhouse clock, ISO 8601 with its offset, e.g. 2026-03-01T14:00:00+01:00.',
    },
    source: {
      type: 'string',
      description: '`manual` when typed or edited by hand, otherwise the id of the import that last set the value.',
    },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    version: { type: 'string', description: 'Hybrid-logical-clock stamp; grows with every change.' },
  },
  additionalProperties: false,
};

export function presentReading(r: ClimateReading, zone: string) {
  return {
    point_id: r.id,
    organization_id: r.organization_id,
    cycle_id: r.cycle_id,
    metric: r.metric,
    value: r.value,
    unit: climateMetric(r.metric)?.unit ?? '',
    at: presentInstant(r.at_utc, zone),
    source: r.import_id ?? 'manual',
    created_at: r.created_at,
    updated_at: r.updated_at,
    version: r.version,
  };
}
