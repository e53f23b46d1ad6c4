import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { auth, can, signIn, signOut, storedToken } from "./api";
import { href, Link, match, navigate, useLoc } from "./router";
import { useSignal } from "./signal";
import { live, startStream, stopStream } from "./stream";
import { ActivitiesView } from "./views/activities/page";
import { ActivityView } from "./views/activity/page";
import { ActivityForm } from "./views/activityForm/page";
import { RunsView } from "./views/runs/page";
import { RunView } from "./views/run/page";
import { EventsView, EventView } from "./views/events";
import { SourcesView, SourceView } from "./views/sources";
import { AlertsView } from "./views/alerts";
import { SubscriptionsView, SubscriptionView } from "./views/subscriptions";
import { SettingsView } from "./views/settings";
import { KeysView } from "./views/keys";
import { AuditView } from "./views/audit";
import { CalendarsView } from "./views/calendars/list";
import { CalendarView } from "./views/calendars/page";
import { ProjectsView } from "./views/projects/page";
import { ProjectSwitcher } from "./views/projects/switcher";

const NAV: [string, string][] = [
    ["/activities", "Activities"],
    ["/runs", "Runs"],
    ["/events", "Events"],
    ["/sources", "Sources"],
    ["/alerts", "Alerts"],
    ["/subscriptions", "Subscriptions"],
    ["/calendars", "Calendars"],
];
/** Views only an admin key can use. */
const ADMIN_NAV: [string, string][] = [
    ["/keys", "API keys"],
    ["/audit", "Audit log"],
];
/** Views only an operator key can use. */
const OPERATOR_NAV: [string, string][] = [["/projects", "Projects"]];

export function App(): JSX.Element {
    const a = useSignal(auth);
    const { project } = useLoc();
    useEffect(() => {
        void signIn(storedToken()).then((msg) => {
            if (msg !== null && auth.value.state !== "in") auth.value = msg ? { state: "prompt", message: msg } : { state: "prompt" };
        });
    }, []);
    useEffect(() => {
        // The stream shows one project's changes: another project, another stream.
        stopStream();
        if (a.state === "in") startStream();
    }, [a.state, project]);
    if (a.state === "checking") {
        return (
            <main class="center">
                <p role="status">Connecting…</p>
            </main>
        );
    }
    if (a.state === "prompt") return <KeyPrompt message={a.message} />;
    if (a.session.scope === "events") {
        return (
            <main class="center" id="main">
                <div class="card prompt">
                    <h1>This key cannot read</h1>
                    <p>Its scope is <code>events</code>: it may only send events. The console needs a key of scope read, write or admin.</p>
                    <button type="button" onClick={() => signOut()}>
                        Use another key
                    </button>
                </div>
            </main>
        );
    }
    return <Shell />;
}

function KeyPrompt({ message }: { message?: string | undefined }): JSX.Element {
    const [busy, setBusy] = useState(false);
    const [err, setErr] = useState<string | null>(null);
    const ref = useRef<HTMLInputElement>(null);
    useEffect(() => {
        ref.current?.focus();
        document.title = "Sign in · ACP console";
    }, []);
    return (
        <main class="center" id="main">
            <form
                class="card prompt"
                onSubmit={(e) => {
                    e.preventDefault();
                    const token = ref.current?.value.trim() ?? "";
                    if (!token) {
                        setErr("Enter an API key.");
                        return;
                    }
                    setBusy(true);
                    setErr(null);
                    void signIn(token).then((m) => {
                        setBusy(false);
                        if (m !== null) setErr(m || "That key was refused.");
                    });
                }}
            >
                <h1>Activity control plane</h1>
                <p>Enter an API key. It is kept in this tab's session storage only, and sent as a bearer token.</p>
                {message && (
                    <p class="error" role="alert">
                        {message}
                    </p>
                )}
                <label for="token">API key</label>
                <input id="token" ref={ref} type="password" autoComplete="off" spellcheck={false} required />
                {err && (
                    <p class="error" role="alert">
                        {err}
                    </p>
                )}
                <button type="submit" disabled={busy}>
                    {busy ? "Checking…" : "Sign in"}
                </button>
            </form>
        </main>
    );
}

function LiveIndicator(): JSX.Element {
    const s = useSignal(live);
    const text = { live: "Live", connecting: "Connecting", reconnecting: "Reconnecting", off: "Offline" }[s];
    return (
        <span class="live" data-state={s} role="status" title="Change stream connection">
            <span class="dot" aria-hidden="true" />
            {text}
        </span>
    );
}

function Shell(): JSX.Element {
    const loc = useLoc();
    const a = useSignal(auth);
    const session = a.state === "in" ? a.session : null;
    const [menu, setMenu] = useState(false);
    useEffect(() => setMenu(false), [loc.path]);
    if (loc.path === "/" || loc.path === "") {
        queueMicrotask(() => navigate(href("/activities"), true));
    }
    const section = "/" + (loc.path.split("/")[1] ?? "");
    return (
        <>
            <a class="skip" href="#main">
                Skip to content
            </a>
            <header class="top">
                <Link href={href("/activities")} class="brand">
                    ACP console
                </Link>
                <button type="button" class="menu-toggle ghost" aria-expanded={menu} aria-controls="nav" onClick={() => setMenu(!menu)}>
                    Menu
                </button>
                <nav id="nav" aria-label="Main" class={menu ? "open" : ""}>
                    <ul>
                        {[...NAV, ...(can("admin") ? ADMIN_NAV : []), ...(session?.scope === "operator" ? OPERATOR_NAV : [])].map(([p, label]) => (
                            <li key={p}>
                                <Link href={href(p)} aria-current={section === p ? "page" : undefined}>
                                    {label}
                                </Link>
                            </li>
                        ))}
                    </ul>
                </nav>
                <div class="who">
                    <ProjectSwitcher />
                    <LiveIndicator />
                    <span class="scope" title="The key's scope">
                        {session?.authentication === "disabled" ? "auth off" : `${session?.key?.name ?? "key"} · ${session?.scope ?? ""}`}
                    </span>
                    <Link href={href("/settings")} aria-current={section === "/settings" ? "page" : undefined}>
                        Settings
                    </Link>
                    {session?.authentication === "required" && (
                        <button type="button" class="ghost" onClick={() => signOut()}>
                            Sign out
                        </button>
                    )}
                </div>
            </header>
            <main id="main" tabIndex={-1}>
                {/* Another project: every view loads afresh. */}
                <Routes key={loc.project ?? ""} />
            </main>
        </>
    );
}

function Routes(): JSX.Element {
    const { path } = useLoc();
    let m: Record<string, string> | null;
    if (match("/activities", path)) return <ActivitiesView />;
    if (match("/activities/new", path)) return <ActivityForm />;
    if ((m = match("/activities/:id/edit", path))) return <ActivityForm id={m["id"]!} />;
    if ((m = match("/activities/:id", path))) return <ActivityView id={m["id"]!} key={m["id"]} />;
    if (match("/runs", path)) return <RunsView />;
    if ((m = match("/runs/:id", path))) return <RunView id={m["id"]!} key={m["id"]} />;
    if (match("/events", path)) return <EventsView />;
    if ((m = match("/events/:id", path))) return <EventView id={m["id"]!} key={m["id"]} />;
    if (match("/sources", path)) return <SourcesView />;
    if ((m = match("/sources/:id", path))) return <SourceView id={m["id"]!} key={m["id"]} />;
    if (match("/alerts", path)) return <AlertsView />;
    if (match("/subscriptions", path)) return <SubscriptionsView />;
    if ((m = match("/subscriptions/:id", path))) return <SubscriptionView id={m["id"]!} key={m["id"]} />;
    if (match("/settings", path)) return <SettingsView />;
    if (match("/keys", path)) return <KeysView />;
    if (match("/audit", path)) return <AuditView />;
    if (match("/projects", path)) return <ProjectsView />;
    if (match("/calendars", path)) return <CalendarsView />;
    if ((m = match("/calendars/:id", path))) return <CalendarView id={m["id"]!} key={m["id"]} />;
    return (
        <section>
            <h1>Not found</h1>
            <p>
                No view at this address. <Link href={href("/activities")}>Go to the activities.</Link>
            </p>
        </section>
    );
}
