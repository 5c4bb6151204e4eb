// The organization's tree (GET {org}): farms > greenhouses > rows > crop cycles, read once and kept
// until a write changes it. Screens find their level in it by the ids of their path.
import { useEffect, useState } from 'preact/hooks';
import { get } from './api';

export interface Cycle {
  organization_id: string;
  farm_id: string;
  greenhouse_id: string;
  row_id: string;
  cycle_id: string;
  name: string;
  started_on: string;
  ended_on: string | null;
  crop: string | null;
  variety: string | null;
  plants_per_m2: number | null;
  stems_per_m2: number | null;
  area_m2?: number | null;
  notes: string | null;
}
export interface Row {
  row_id: string;
  name: string;
  length_m: number | null;
  plant_count: number | null;
  notes: string | null;
  cycles?: Cycle[];
}
export interface Greenhouse {
  greenhouse_id: string;
  farm_id: string;
  name: string;
  time_zone: string;
  latitude: number | null;
  longitude: number | null;
  area_m2: number | null;
  notes: string | null;
  rows?: Row[];
}
export interface Farm {
  farm_id: string;
  name: string;
  location: string | null;
  notes: string | null;
  greenhouses?: Greenhouse[];
}
export interface Tree {
  organization_id: string;
  name: string;
  farms: Farm[];
}

let cached: { org: string; promise: Promise<Tree> } | undefined;
const listeners = new Set<() => void>();

export function loadTree(org: string): Promise<Tree> {
  if (!cached || cached.org !== org) cached = { org, promise: get<Tree>(`/api/organizations/${org}`) };
  cached.promise.catch(() => (cached = undefined));
  return cached.promise;
}

/** After a write to the registry: read the tree again and tell every screen that shows it. */
export function refreshTree() {
  cached = undefined;
  for (const l of listeners) l();
}

export function useTree(org: string | undefined): { tree?: Tree; error?: Error } {
  const [state, setState] = useState<{ tree?: Tree; error?: Error }>({});
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const l = () => setVersion((v) => v + 1);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  useEffect(() => {
    if (!org) return;
    let live = true;
    loadTree(org).then(
      (tree) => live && setState({ tree }),
      (error: Error) => live && setState({ error }),
    );
    return () => {
      live = false;
    };
  }, [org, version]);
  return state;
}

export interface Place {
  farm?: Farm;
  greenhouse?: Greenhouse;
  row?: Row;
  cycle?: Cycle;
}

export function find(tree: Tree, ids: { farm?: string; greenhouse?: string; row?: string; cycle?: string }): Place {
  const farm = tree.farms.find((f) => f.farm_id === ids.farm);
  const greenhouse = farm?.greenhouses?.find((g) => g.greenhouse_id === ids.greenhouse);
  const row = greenhouse?.rows?.find((r) => r.row_id === ids.row);
  const cycle = row?.cycles?.find((c) => c.cycle_id === ids.cycle);
  return { farm, greenhouse, row, cycle };
}

/** API paths of the levels. */
export const apiPath = {
  org: (org: string) => `/api/organizations/${org}`,
  farm: (org: string, f: string) => `/api/organizations/${org}/farms/${f}`,
  greenhouse: (org: string, f: string, g: string) => `/api/organizations/${org}/farms/${f}/greenhouses/${g}`,
  row: (org: string, f: string, g: string, r: string) => `/api/organizations/${org}/farms/${f}/greenhouses/${g}/rows/${r}`,
  cycle: (org: string, f: string, g: string, r: string, c: string) =>
    `/api/organizations/${org}/farms/${f}/greenhouses/${g}/rows/${r}/cycles/${c}`,
};
