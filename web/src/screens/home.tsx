// The organization's farms, with every greenhouse, row and crop cycle a tap away.
import { Link } from '../router';
import { pathOf } from '../routes';
import { apiPath, useTree } from '../tree';
import { useSession } from '../session';
import { Loading, ProblemBox, usePage } from '../ui';
import { CreateLevel, FARM_FIELDS } from './registry';

export function Home() {
  const session = useSession();
  const { tree, error } = useTree(session.organization_id);
  const { page, pager } = usePage(tree?.farms ?? [], 10);
  if (error) return <ProblemBox problem={error as never} />;
  if (!tree) return <Loading />;
  return (
    <section>
      <h1>{tree.name}</h1>
      {tree.farms.length === 0 ? (
        <p class="empty">No farm yet. Add the first one below, then its greenhouses, rows and crop cycles.</p>
      ) : null}
      {page.map((farm) => (
        <article class="farm" key={farm.farm_id}>
          <h2>
            <Link href={pathOf('farm', { farm: farm.farm_id })}>{farm.name}</Link>
          </h2>
          {(farm.greenhouses ?? []).map((gh) => (
            <div class="gh" key={gh.greenhouse_id}>
              <h3>
                <Link href={pathOf('greenhouse', { farm: farm.farm_id, greenhouse: gh.greenhouse_id })}>{gh.name}</Link>
              </h3>
              <ul class="tiles">
                {(gh.rows ?? []).flatMap((row) =>
                  (row.cycles ?? []).map((c) => (
                    <li key={c.cycle_id}>
                      <Link
                        href={pathOf('cycle', { farm: farm.farm_id, greenhouse: gh.greenhouse_id, row: row.row_id, cycle: c.cycle_id })}
                      >
                        <strong>{row.name}</strong>
                        <span>
                          {c.name}
                          {c.ended_on ? ' (ended)' : ''}
                        </span>
                      </Link>
                    </li>
                  )),
                )}
                {(gh.rows ?? [])
                  .filter((r) => !r.cycles?.length)
                  .map((row) => (
                    <li key={row.row_id}>
                      <Link href={pathOf('row', { farm: farm.farm_id, greenhouse: gh.greenhouse_id, row: row.row_id })}>
                        <strong>{row.name}</strong>
                        <span>no crop cycle yet</span>
                      </Link>
                    </li>
                  ))}
              </ul>
            </div>
          ))}
        </article>
      ))}
      {pager}
      <CreateLevel
        title="Add a farm"
        op="create_farm"
        fields={FARM_FIELDS}
        url={`${apiPath.org(session.organization_id)}/farms`}
        go={(f) => pathOf('farm', { farm: f.farm_id })}
      />
    </section>
  );
}
