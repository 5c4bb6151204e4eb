// The app's screens and their paths. Plain data, no DOM: the box's server reads the first segments
// (src/http/web-app.ts, APP_SECTIONS) to answer these paths with the app, and a test checks both agree.

const CYCLE = '/farms/:farm/greenhouses/:greenhouse/rows/:row/cycles/:cycle';

export const ROUTES = [
  { name: 'home', pattern: '/' },
  { name: 'signIn', pattern: '/sign-in' },
  { name: 'farm', pattern: '/farms/:farm' },
  { name: 'greenhouse', pattern: '/farms/:farm/greenhouses/:greenhouse' },
  { name: 'row', pattern: '/farms/:farm/greenhouses/:greenhouse/rows/:row' },
  { name: 'cycle', pattern: CYCLE },
  { name: 'walkRow', pattern: `${CYCLE}/walk` },
  { name: 'records', pattern: `${CYCLE}/records` },
  { name: 'climate', pattern: `${CYCLE}/climate` },
  { name: 'week', pattern: `${CYCLE}/week/:week` },
  { name: 'walk', pattern: '/walks/:walk' },
  { name: 'keys', pattern: '/keys' },
] as const;

export type RouteName = (typeof ROUTES)[number]['name'];
export type Params = Record<string, string>;

export interface Match {
  name: RouteName;
  params: Params;
}

const compiled = ROUTES.map((r) => {
  const keys: string[] = [];
  const source = r.pattern.replace(/:([a-z]+)/g, (_m, k: string) => {
    keys.push(k);
    return '([^/]+)';
  });
  return { name: r.name, keys, re: new RegExp(`^${source}/?$`) };
});

export function matchPath(pathname: string): Match | undefined {
  for (const r of compiled) {
    const m = r.re.exec(pathname);
    if (!m) continue;
    const params: Params = {};
    r.keys.forEach((k, i) => (params[k] = decodeURIComponent(m[i + 1]!)));
    return { name: r.name, params };
  }
  return undefined;
}

export function pathOf(name: RouteName, params: Params = {}): string {
  const route = ROUTES.find((r) => r.name === name)!;
  return route.pattern.replace(/:([a-z]+)/g, (_m, k: string) => encodeURIComponent(params[k] ?? ''));
}
