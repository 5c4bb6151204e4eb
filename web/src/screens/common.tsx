import type { ComponentChildren } from 'preact';
import { Link } from '../router';
import { pathOf } from '../routes';
import { find, useTree, type Place, type Tree } from '../tree';
import { useSession } from '../session';
import { Loading, ProblemBox } from '../ui';

export interface Ids {
  farm?: string;
  greenhouse?: string;
  row?: string;
  cycle?: string;
  week?: string;
}

/** Where a screen is in the tree, as links back up. */
export function Crumbs({ place }: { place: Place }) {
  const { farm, greenhouse, row, cycle } = place;
  const ids = {
    farm: farm?.farm_id ?? '',
    greenhouse: greenhouse?.greenhouse_id ?? '',
    row: row?.row_id ?? '',
    cycle: cycle?.cycle_id ?? '',
  };
  return (
    <nav class="crumbs" aria-label="Where you are">
      <ol>
        <li>
          <Link href="/">Farms</Link>
        </li>
        {farm ? (
          <li>
            <Link href={pathOf('farm', ids)}>{farm.name}</Link>
          </li>
        ) : null}
        {greenhouse ? (
          <li>
            <Link href={pathOf('greenhouse', ids)}>{greenhouse.name}</Link>
          </li>
        ) : null}
        {row ? (
          <li>
            <Link href={pathOf('row', ids)}>{row.name}</Link>
          </li>
        ) : null}
        {cycle ? (
          <li>
            <Link href={pathOf('cycle', ids)}>{cycle.name}</Link>
          </li>
        ) : null}
      </ol>
    </nav>
  );
}

/** Renders its children with the tree and this screen's place in it, or says why it cannot. */
export function WithPlace(props: {
  ids: Ids;
  need: 'farm' | 'greenhouse' | 'row' | 'cycle';
  children: (place: Place, tree: Tree) => ComponentChildren;
}) {
  const session = useSession();
  const { tree, error } = useTree(session.organization_id);
  if (error) return <ProblemBox problem={error as never} />;
  if (!tree) return <Loading />;
  const place = find(tree, props.ids);
  if (!place[props.need])
    return (
      <section>
        <h1>Not found</h1>
        <p>
          This {props.need === 'cycle' ? 'crop cycle' : props.need} is not in your organization (or it was deleted).{' '}
          <Link href="/">Back to the farms</Link>.
        </p>
      </section>
    );
  return <>{props.children(place, tree)}</>;
}

export function cycleIds(place: Place) {
  return {
    farm: place.farm!.farm_id,
    greenhouse: place.greenhouse!.greenhouse_id,
    row: place.row!.row_id,
    cycle: place.cycle!.cycle_id,
  };
}
