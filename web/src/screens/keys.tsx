// Keys (admin keys only): list, create (the secret shown once, with a copy button), rename, revoke.
import { useRef, useState } from 'preact/hooks';
import { api, ApiError, get } from '../api';
import { useSession } from '../session';
import { bodyOf, fmtInstant, Form, Loading, Notice, ProblemBox, usePage, useForm, useLoad, type FieldDef } from '../ui';

interface Key {
  key_id: string;
  name: string;
  role: 'admin' | 'member';
  display: string;
  active: boolean;
  revoked_at: string | null;
  created_at: string;
}

const CREATE_FIELDS: FieldDef[] = [
  { name: 'name', label: 'Name', required: true, hint: 'Who or what uses it, e.g. “harvest tablet”.' },
  {
    name: 'role',
    label: 'Role',
    kind: 'select',
    options: [
      ['member', 'member: records, walks, climate'],
      ['admin', 'admin: also manages keys'],
    ],
  },
];

/** The new key's secret, once. Copying works on a box served over plain http too (no clipboard API there). */
function Secret({ secret, onDone }: { secret: string; onDone: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState(false);
  return (
    <div class="secret" role="region" aria-label="The new key">
      <p>
        <strong>Copy this key now.</strong> It is shown this once; the box keeps only a hash of it.
      </p>
      <label for="new-secret">New key</label>
      <input id="new-secret" ref={field} readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
      <div class="actions">
        <button
          type="button"
          class="primary"
          onClick={async () => {
            try {
              await navigator.clipboard.writeText(secret);
            } catch {
              field.current?.select();
              document.execCommand('copy');
            }
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </div>
  );
}

function KeyRow({ k, url, self, onChange }: { k: Key; url: string; self: boolean; onChange: () => void }) {
  const [renaming, setRenaming] = useState(false);
  const form = useForm('rename_key', { name: k.name }, ['name']);
  const [problem, setProblem] = useState<ApiError>();
  return (
    <li class={k.active ? '' : 'revoked'}>
      <div class="row-line">
        <span>
          <strong>{k.name}</strong> · {k.role} · <code>{k.display}</code>
          {self ? ' · this is you' : ''}
          {k.active ? '' : ` · revoked ${fmtInstant(k.revoked_at)}`}
        </span>
        {k.active ? (
          <span class="row-actions">
            <button type="button" onClick={() => setRenaming(!renaming)} aria-expanded={renaming}>
              Rename
            </button>
            <button
              type="button"
              class="danger"
              onClick={async () => {
                if (!confirm(`Revoke “${k.name}”? Whoever uses it is signed out at once.`)) return;
                setProblem(undefined);
                try {
                  await api('POST', `${url}/${k.key_id}/revoke`);
                  onChange();
                } catch (err) {
                  setProblem(err as ApiError);
                }
              }}
            >
              Revoke
            </button>
          </span>
        ) : null}
      </div>
      <ProblemBox problem={problem} />
      {renaming ? (
        <Form
          form={form}
          fields={[{ name: 'name', label: 'New name', required: true }]}
          submitLabel="Rename"
          onSubmit={() => {
            const body = { name: (form.values.name ?? '').trim() };
            void form.submit(async () => {
              await api('PATCH', `${url}/${k.key_id}`, { json: body });
              setRenaming(false);
              onChange();
            }, body);
          }}
        />
      ) : null}
    </li>
  );
}

export function KeysScreen() {
  const session = useSession();
  const url = `/api/organizations/${session.organization_id}/keys`;
  const list = useLoad((s) => (session.role === 'admin' ? get<{ items: Key[] }>(url, {}, s) : Promise.resolve({ items: [] })), [url]);
  const form = useForm('create_key', { role: 'member' }, ['name', 'role']);
  const [secret, setSecret] = useState<string>();
  const [showRevoked, setShowRevoked] = useState(false);
  const items = (list.data?.items ?? []).filter((k) => showRevoked || k.active);
  const { page, pager } = usePage(items, 15);
  if (session.role !== 'admin')
    return (
      <section>
        <h1>Keys</h1>
        <Notice>Only an admin key manages keys. Ask your admin for a new key or to revoke one.</Notice>
      </section>
    );
  return (
    <section>
      <h1>Keys</h1>
      <h2>New key</h2>
      {secret ? (
        <Secret secret={secret} onDone={() => setSecret(undefined)} />
      ) : (
        <Form
          form={form}
          fields={CREATE_FIELDS}
          submitLabel="Create the key"
          onSubmit={() => {
            const body = bodyOf(CREATE_FIELDS, form.values, undefined);
            void form.submit(async () => {
              const made = await api<Key & { api_key: string }>('POST', url, { json: body });
              setSecret(made.api_key);
              form.setAll({ role: 'member' });
              list.reload();
            }, body);
          }}
        />
      )}
      <h2>Keys of the organization</h2>
      <label class="check">
        <input type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.currentTarget.checked)} /> Show revoked keys
      </label>
      {list.error ? <ProblemBox problem={list.error} /> : null}
      {list.data ? (
        <>
          <ul class="list keys">
            {page.map((k) => (
              <KeyRow key={k.key_id} k={k} url={url} self={k.key_id === session.key_id} onChange={list.reload} />
            ))}
          </ul>
          {pager}
        </>
      ) : (
        <Loading />
      )}
    </section>
  );
}
