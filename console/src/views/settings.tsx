import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { auth } from "../api";
import { saveSettings, settings } from "../settings";
import { useSignal } from "../signal";

export function SettingsView(): JSX.Element {
    const [s, setS] = useState(settings());
    const [saved, setSaved] = useState(false);
    const a = useSignal(auth);
    useEffect(() => {
        document.title = "Settings · ACP console";
    }, []);
    return (
        <section>
            <h1>Settings</h1>
            <form
                class="form"
                onSubmit={(e) => {
                    e.preventDefault();
                    saveSettings(s);
                    setSaved(true);
                }}
            >
                <fieldset>
                    <legend>Temporal UI</legend>
                    <p class="muted small">Run pages link each execution into the Temporal UI. The API does not expose the Temporal namespace; set it here. Kept in this browser's local storage.</p>
                    <label>
                        Temporal UI address
                        <input name="temporalUi" type="url" value={s.temporalUi} onInput={(e) => (setS({ ...s, temporalUi: (e.target as HTMLInputElement).value }), setSaved(false))} />
                    </label>
                    <label>
                        Namespace
                        <input name="namespace" value={s.namespace} onInput={(e) => (setS({ ...s, namespace: (e.target as HTMLInputElement).value }), setSaved(false))} />
                    </label>
                </fieldset>
                <div class="actions">
                    <button type="submit">Save</button>
                    {saved && <span role="status">Saved.</span>}
                </div>
            </form>
            {a.state === "in" && (
                <section class="block">
                    <h2>This session</h2>
                    <dl class="facts">
                        <dt>Authentication</dt>
                        <dd>{a.session.authentication}</dd>
                        <dt>Scope</dt>
                        <dd>{a.session.scope}</dd>
                        {a.session.key && (
                            <>
                                <dt>Key</dt>
                                <dd>
                                    {a.session.key.name} <code>{a.session.key.id}</code>
                                </dd>
                            </>
                        )}
                    </dl>
                </section>
            )}
        </section>
    );
}
