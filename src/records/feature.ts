import type { Feature, RecordKind } from '../feature.js';
import { harvestRoutes } from './harvests/routes.js';
import { irrigationRoutes } from './irrigation/routes.js';
import { fruitMassRoutes } from './fruit-mass/routes.js';
import { trussCountRoutes } from './truss-counts/routes.js';
import { weekNoteRoutes } from './week-notes/routes.js';
import './tables.js';

const onCycle = (name: string, table: string, dependsOn?: string[]): RecordKind => ({
  name,
  table,
  scope: 'cycle',
  column: 'cycle_id',
  ...(dependsOn ? { dependsOn } : {}),
});

/** Records a registrar keeps on a crop cycle (climate readings are their own feature). */
export const recordsFeature: Feature = {
  name: 'records',
  routes: [...harvestRoutes, ...irrigationRoutes, ...fruitMassRoutes, ...trussCountRoutes, ...weekNoteRoutes],
  recordKinds: [
    onCycle('harvests', 'harvests'),
    onCycle('irrigation', 'irrigation_entries'),
    onCycle('fruit_mass', 'fruit_masses'),
    onCycle('truss_counts', 'truss_counts'),
    // Rows reference their count date, so the cascade removes them first.
    onCycle('truss_count_rows', 'truss_count_rows', ['truss_counts']),
    onCycle('week_notes', 'week_notes'),
  ],
};
