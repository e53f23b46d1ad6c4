import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { auth, can, type Scope } from "../api";
import { createKey, revokeKey, useKeys, type CreatedKey, type Key } from "../api/keys";
import { fmtTime, relative } from "../format";
import { Dialog, ErrorBox, Loading, useListZone } from "../ui";

const SCOPES: [Scope, string][] = [
    ["read", "read: every GET"],
    ["write", "write: read, definitions and run control"],
    ["events", "events: send events only"],
    ["admin", "admin: everything, keys included"],
];

/** The API keys: who holds which scope, a new key (its token shown once), revoke. */
export function KeysView(): JSX.Element {
    const zone = useListZone();
    useEffect(() => {
        document.title = "API keys · ACP console";
    }, []);
    const keys = useKeys();
    const [created, setCreated] = useState<CreatedKey | null>(null);
    const [revoking, setRevoking] = useState<Key | null>(null);
    if (!can("admin")) {
        return (
            <section>
                <h1>API keys</h1>
                <p class="empty">Only a key of scope admin can see and manage keys.</p>
            </section>
        );
    }
    const items = keys.data?.items ?? [];
    return (
        <section>
            <h1>API keys</h1>
            <p class="muted small">Each caller holds its own key: revoking one stops only that caller. A key's token is shown once, when it is created.</p>
            <NewKeyForm
                onCreated={(k) => {
                    setCreated(k);
                    keys.reload();
                }}
            />
            {created && <NewToken k={created} onDone={() => setCreated(null)} />}
            <ErrorBox error={keys.error} />
            {keys.data === undefined && keys.loading ? (
                <Loading what="keys" />
            ) : items.length === 0 ? (
                <p class="empty">No key.</p>
            ) : (
                <table class="list">
                    <caption class="sr-only">API keys</caption>
                    <thead>
                        <tr>
                            <th scope="col">Name</th>
                            <th scope="col">Scope</th>
                            <th scope="col">Created</th>
                            <th scope="col">State</th>
                            <th scope="col">
                                <span class="sr-only">Actions</span>
                            </th>
                        </tr>
                    </thead>
                    <tbody>
                        {items.map((k) => (
                            <tr key={k.id} data-key={k.id} data-revoked={k.revoked_at ? "true" : undefined}>
                                <td data-label="Name">
                                    {k.name}
                                    <div class="muted small">
                                        <code>{k.id}</code>
                                    </div>
                                </td>
                                <td data-label="Scope">
                                    <span class="badge">{k.scope}</span>
                                </td>
                                <td data-label="Created">
                                    <span title={fmtTime(k.created_at, zone)}>{relative(k.created_at)}</span>
                                </td>
                                <td data-label="State">{k.revoked_at ? <span title={fmtTime(k.revoked_at, zone)}>revoked {relative(k.revoked_at)}</span> : "active"}</td>
                                <td data-label="Actions">
                                    {!k.revoked_at && (
                                        <button type="button" class="ghost" aria-label={`Revoke ${k.name}`} onClick={() => setRevoking(k)}>
                                            Revoke
                                        </button>
                                    )}
                                </td>
                            </tr>
                        ))}
                    </tbody>
                </table>
            )}
            {revoking && (
                <RevokeDialog
                    k={revoking}
                    onClose={() => setRevoking(null)}
                    onRevoked={() => {
                        setRevoking(null);
                        keys.reload();
                    }}
                />
            )}
        </section>
    );
}

function NewKeyForm({ onCreated }: { onCreated: (k: CreatedKey) => void }): JSX.Element {
    const [name, setName] = useState("");
    const [scope, setScope] = useState<Scope>("read");
    const [busy, setBusy] = useState(false);
    const [err, setErr] = useState<string | null>(null);
    return (
        <form
            class="filters"
            aria-label="New API key"
            onSubmit={(e) => {
                e.preventDefault();
                setBusy(true);
                setErr(null);
                createKey({ name: name.trim(), scope }).then(
                    (k) => {
                        setBusy(false);
                        setName("");
                        onCreated(k);
                    },
                    (x: unknown) => {
                        setBusy(false);
                        setErr(x instanceof Error ? x.message : String(x));
                    },
                );
            }}
        >
            <label>
                Name
                <input name="name" value={name} required maxLength={200} placeholder="e.g. crm-webhooks" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
            </label>
            <label>
                Scope
                <select name="scope" value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value as Scope)}>
                    {SCOPES.map(([s, label]) => (
                        <option key={s} value={s}>
                            {label}
                        </option>
                    ))}
                </select>
            </label>
            <button type="submit" disabled={busy || name.trim() === ""}>
                {busy ? "Creating…" : "Create key"}
            </button>
            {err && (
                <p class="error" role="alert">
                    {err}
                </p>
            )}
        </form>
    );
}

/** The new key's token, once: the service keeps only its digest. */
function NewToken({ k, onDone }: { k: CreatedKey; onDone: () => void }): JSX.Element {
    return (
        <div class="flash" role="status" data-testid="new-token">
            <p>
                Key <strong>{k.name}</strong> ({k.scope}) created. Copy its token now: it is not shown again.
            </p>
            <p>
                <code class="id" data-testid="token">
                    {k.token}
                </code>
            </p>
            <button type="button" class="ghost" onClick={onDone}>
                I have stored it
            </button>
        </div>
    );
}

function RevokeDialog({ k, onClose, onRevoked }: { k: Key; onClose: () => void; onRevoked: () => void }): JSX.Element {
    const [err, setErr] = useState<string | null>(null);
    const [busy, setBusy] = useState(false);
    return (
        <Dialog title={`Revoke ${k.name}?`} onClose={onClose}>
            <p>Every request with this key is refused from now on, and its open change streams close. This cannot be undone: the caller needs a new key.</p>
            {auth.value.state === "in" && auth.value.session.key?.id === k.id && (
                <p class="warn">This is the key this console is signed in with: you will be asked for another one.</p>
            )}
            <ErrorBox error={err ?? undefined} />
            <div class="actions">
                <button
                    type="button"
                    class="danger"
                    disabled={busy}
                    onClick={() => {
                        setBusy(true);
                        revokeKey(k.id).then(onRevoked, (x: unknown) => {
                            setBusy(false);
                            setErr(x instanceof Error ? x.message : String(x));
                        });
                    }}
                >
                    Revoke
                </button>
                <button type="button" class="ghost" onClick={onClose}>
                    Cancel
                </button>
            </div>
        </Dialog>
    );
}
