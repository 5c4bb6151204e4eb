/**
 * What the forecast needs from a truss count: how many fruit hang per truss,
 * trusses and fruit per plant, flowers per plant, and fruit per m² scaled by
 * the crop's density. Pure functions over the counted rows, so they can be
 * checked by hand.
 */
export interface CountedRow {
  plant: string;
  truss: number;
  fruits: number;
  flowers?: number | null;
}

export interface Density {
  stems_per_m2: number | null;
  plants_per_m2: number | null;
  /** Stem density carried by this count date or the last earlier one that carries one; it wins over the cycle's. */
  count_stems_per_m2?: number | null;
  /** The count date that carried it. */
  count_stems_from?: string | null;
}

export interface CountFigures {
  plants: number;
  trusses: number;
  fruits: number;
  /** Null when no row of the count has flowers. */
  flowers: number | null;
  fruit_per_truss: number;
  trusses_per_plant: number;
  fruit_per_plant: number;
  flowers_per_plant: number | null;
  fruit_per_m2: number | null;
  /** The density (per m²) that scaled fruit_per_m2. */
  density_per_m2: number | null;
  /** Which density scaled fruit_per_m2: a count date's stems_per_m2, else the cycle's stems_per_m2, else its plants_per_m2. */
  density_basis: 'truss_count' | 'stems_per_m2' | 'plants_per_m2' | null;
  /** For density_basis truss_count: the count date whose stems_per_m2 is in force. */
  density_from: string | null;
  /** Why fruit_per_m2 is null; null when it is given. */
  fruit_per_m2_reason: string | null;
}

export type FigureName = 'fruit_per_truss' | 'trusses_per_plant' | 'fruit_per_plant' | 'flowers_per_plant' | 'fruit_per_m2';
export const FIGURE_NAMES: FigureName[] = ['fruit_per_truss', 'trusses_per_plant', 'fruit_per_plant', 'flowers_per_plant', 'fruit_per_m2'];

export interface CountChange {
  /** The earlier count compared with. */
  since: string;
  days: number;
  /** This count's figure minus the earlier one's; null where either is null. */
  delta: Record<FigureName, number | null>;
  /** delta scaled to 7 days. */
  per_week: Record<FigureName, number | null>;
}

const round = (n: number, places = 4) => Math.round(n * 10 ** places) / 10 ** places;

export function countFigures(rows: readonly CountedRow[], density: Density): CountFigures {
  const plants = new Set(rows.map((r) => r.plant)).size;
  const trusses = rows.length;
  const fruits = rows.reduce((s, r) => s + r.fruits, 0);
  const withFlowers = rows.filter((r) => r.flowers !== undefined && r.flowers !== null);
  const flowers = withFlowers.length ? withFlowers.reduce((s, r) => s + r.flowers!, 0) : null;
  const perPlant = (n: number) => (plants ? n / plants : 0);
  const fruitPerPlant = perPlant(fruits);
  // A counted "plant" is one tagged head: with stems_per_m2 set (extra stems per plant) the stem density is what scales it;
  // a count date's own stem density (extra stems kept from that date) wins over the cycle's.
  const basis: CountFigures['density_basis'] = density.count_stems_per_m2
    ? 'truss_count'
    : density.stems_per_m2
      ? 'stems_per_m2'
      : density.plants_per_m2
        ? 'plants_per_m2'
        : null;
  const perM2 = basis === 'truss_count' ? density.count_stems_per_m2! : basis ? density[basis]! : null;
  return {
    plants,
    trusses,
    fruits,
    flowers,
    fruit_per_truss: round(trusses ? fruits / trusses : 0),
    trusses_per_plant: round(perPlant(trusses)),
    fruit_per_plant: round(fruitPerPlant),
    flowers_per_plant: flowers === null ? null : round(perPlant(flowers)),
    fruit_per_m2: perM2 === null ? null : round(fruitPerPlant * perM2),
    density_per_m2: perM2,
    density_basis: basis,
    density_from: basis === 'truss_count' ? (density.count_stems_from ?? null) : null,
    fruit_per_m2_reason: basis
      ? null
      : 'neither the count dates nor the crop cycle carry stems_per_m2, and the cycle has no plants_per_m2; set one to get fruit per m²',
  };
}

const daysBetween = (earlier: string, later: string) =>
  (Date.parse(`${later}T00:00:00Z`) - Date.parse(`${earlier}T00:00:00Z`)) / 86_400_000;

/** How the figures moved from `previous` (an earlier count date) to `current`. */
export function countChange(
  current: { counted_on: string; figures: CountFigures },
  previous: { counted_on: string; figures: CountFigures },
): CountChange {
  const days = daysBetween(previous.counted_on, current.counted_on);
  const delta = {} as Record<FigureName, number | null>;
  const perWeek = {} as Record<FigureName, number | null>;
  for (const name of FIGURE_NAMES) {
    const a = current.figures[name];
    const b = previous.figures[name];
    delta[name] = a === null || b === null ? null : round(a - b);
    perWeek[name] = a === null || b === null || days <= 0 ? null : round(((a - b) / days) * 7);
  }
  return { since: previous.counted_on, days, delta, per_week: perWeek };
}

/** Figures of every count (newest first) with the change since the next older one. */
export function countSeries<T extends { counted_on: string; rows: readonly CountedRow[]; stems_per_m2?: number | null }>(
  counts: readonly T[],
  density: Density,
) {
  const sorted = [...counts].sort((a, b) => (a.counted_on < b.counted_on ? 1 : a.counted_on > b.counted_on ? -1 : 0));
  // The stem density a count date carries holds from it until the next date that carries one.
  const inForce = new Map<T, { stems: number; from: string }>();
  let current: { stems: number; from: string } | null = null;
  for (const c of [...sorted].reverse()) {
    if (c.stems_per_m2) current = { stems: c.stems_per_m2, from: c.counted_on };
    if (current) inForce.set(c, current);
  }
  const withFigures = sorted.map((c) => ({
    count: c,
    figures: countFigures(c.rows, {
      ...density,
      count_stems_per_m2: inForce.get(c)?.stems ?? null,
      count_stems_from: inForce.get(c)?.from ?? null,
    }),
  }));
  return withFigures.map((c, i) => {
    const older = withFigures[i + 1];
    return {
      ...c,
      change: older
        ? countChange(
            { counted_on: c.count.counted_on, figures: c.figures },
            { counted_on: older.count.counted_on, figures: older.figures },
          )
        : null,
    };
  });
}
