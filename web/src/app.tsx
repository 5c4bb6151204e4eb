import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, whenSignedOut, type Session } from './api';
import { Link, navigate, useLocation } from './router';
import { pathOf } from './routes';
import { SessionContext } from './session';
import { Field, Input, ProblemBox } from './ui';
import { Home } from './screens/home';
import { FarmScreen, GreenhouseScreen, RowScreen } from './screens/registry';
import { CycleScreen } from './screens/cycle';
import { WalkRowScreen } from './screens/walk-row';
import { WalkScreen } from './screens/walk';
import { RecordsScreen } from './screens/records';
import { ClimateScreen } from './screens/climate';
import { WeekScreen } from './screens/week';
import { KeysScreen } from './screens/keys';

/** Sign in with an API key: the box sets the service_key cookie (HttpOnly); the app keeps nothing. */
function SignInForm({ onSignedIn, lost }: { onSignedIn: (s: Session) => void; lost?: boolean }) {
  const [key, setKey] = useState('');
  const [problem, setProblem] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="form sign-in"
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        if (!key.trim()) {
          setProblem(new ApiError(422, 'validation_failed', 'Type or paste your key.', [{ name: 'api_key', message: 'is required' }]));
          return;
        }
        setBusy(true);
        try {
          const s = await api<Session>('POST', '/api/session', { json: { api_key: key.trim() } });
          setKey('');
          onSignedIn(s);
        } catch (err) {
          setProblem(
            err instanceof ApiError && err.status === 401
              ? new ApiError(401, err.code, 'That key is unknown or revoked. Check it and try again.')
              : (err as ApiError),
          );
        } finally {
          setBusy(false);
        }
      }}
    >
      <h1>{lost ? 'Sign in again' : 'Sign in'}</h1>
      <p>
        {lost
          ? 'Your session ended. Sign in to carry on: what you typed is still there.'
          : 'Use the API key you were given (it starts with cwk_).'}
      </p>
      <Field id="api-key" label="API key" error={problem?.errors.find((x) => x.name === 'api_key')?.message}>
        <Input def={{ name: 'api_key', label: 'API key', kind: 'secret' }} id="api-key" value={key} onValue={setKey} />
      </Field>
      {problem && !problem.errors.length ? <ProblemBox problem={problem} /> : null}
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </div>
    </form>
  );
}

function NotFound() {
  return (
    <section>
      <h1>Nothing here</h1>
      <p>
        This page does not exist. <Link href="/">Back to the farms</Link>.
      </p>
    </section>
  );
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [lost, setLost] = useState(false);
  const { match, path } = useLocation();
  const dialog = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    api<Session>('GET', '/api/session').then(setSession, () => setSession(null));
    whenSignedOut(() => setLost(true));
  }, []);
  useEffect(() => {
    if (lost && dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [lost]);
  useEffect(() => {
    const name = match?.name ?? 'not found';
    document.title = `cropwalk · ${name === 'home' ? 'farms' : name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}`;
  }, [path]);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null || match?.name === 'signIn') {
    return (
      <main id="main" class="narrow">
        <SignInForm
          onSignedIn={(s) => {
            setSession(s);
            if (match?.name === 'signIn') navigate('/', true);
          }}
        />
      </main>
    );
  }

  const p = match?.params ?? {};
  let screen;
  switch (match?.name) {
    case 'home':
      screen = <Home />;
      break;
    case 'farm':
      screen = <FarmScreen ids={p} />;
      break;
    case 'greenhouse':
      screen = <GreenhouseScreen ids={p} />;
      break;
    case 'row':
      screen = <RowScreen ids={p} />;
      break;
    case 'cycle':
      screen = <CycleScreen ids={p} />;
      break;
    case 'walkRow':
      screen = <WalkRowScreen ids={p} />;
      break;
    case 'records':
      screen = <RecordsScreen ids={p} />;
      break;
    case 'climate':
      screen = <ClimateScreen ids={p} />;
      break;
    case 'week':
      screen = <WeekScreen ids={p} />;
      break;
    case 'walk':
      screen = <WalkScreen walkId={p.walk!} />;
      break;
    case 'keys':
      screen = <KeysScreen />;
      break;
    default:
      screen = <NotFound />;
  }

  return (
    <SessionContext.Provider value={session}>
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header class="top">
        <Link href="/" class="brand">
          <svg aria-hidden="true" width="26" height="26" viewBox="0 0 32 32">
            <circle cx="16" cy="18" r="12" fill="#e0302a" />
            <path d="M16 6c-3 0-6 2-7 4 3-1 5 0 7 2 2-2 4-3 7-2-1-2-4-4-7-4z" fill="#7bd389" />
          </svg>
          cropwalk
        </Link>
        <nav aria-label="Main">
          <Link href="/">Farms</Link>
          {session.role === 'admin' ? <Link href={pathOf('keys')}>Keys</Link> : null}
          <button
            type="button"
            class="link"
            onClick={async () => {
              await api('DELETE', '/api/session').catch(() => undefined);
              setSession(null);
              navigate(pathOf('signIn'), true);
            }}
          >
            Sign out
          </button>
        </nav>
        <p class="who">
          {session.name} · {session.role}
        </p>
      </header>
      <main id="main">{screen}</main>
      <dialog ref={dialog} aria-label="Sign in again" onCancel={(e) => e.preventDefault()}>
        {lost ? (
          <SignInForm
            lost
            onSignedIn={(s) => {
              setSession(s);
              setLost(false);
              dialog.current?.close();
            }}
          />
        ) : null}
      </dialog>
    </SessionContext.Provider>
  );
}
