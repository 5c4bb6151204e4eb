/** The registry's path shorthands ({org}, {greenhouse}, {cycle}: docs/api-conventions.md, "Paths"), as OpenAPI paths. */
export const ORGS = '/api/organizations';
export const ORG = `${ORGS}/{organization_id}`;
export const FARMS = `${ORG}/farms`;
export const FARM = `${FARMS}/{farm_id}`;
export const GREENHOUSES = `${FARM}/greenhouses`;
export const GREENHOUSE = `${GREENHOUSES}/{greenhouse_id}`;
export const ROWS = `${GREENHOUSE}/rows`;
export const ROW = `${ROWS}/{row_id}`;
export const CYCLES = `${ROW}/cycles`;
export const CYCLE = `${CYCLES}/{cycle_id}`;

export const CYCLE_PARAMS = ['organization_id', 'farm_id', 'greenhouse_id', 'row_id', 'cycle_id'] as const;
export const GREENHOUSE_PARAMS = ['organization_id', 'farm_id', 'greenhouse_id'] as const;
