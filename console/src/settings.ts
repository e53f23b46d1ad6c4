/** Console settings, kept in localStorage (no secrets here). */
export interface Settings {
    temporalUi: string;
    namespace: string;
}

const KEY = "acp.console.settings";
const DEFAULTS: Settings = { temporalUi: "http://127.0.0.1:8233", namespace: "default" };

export function settings(): Settings {
    try {
        const s = JSON.parse(localStorage.getItem(KEY) ?? "{}") as Partial<Settings>;
        return { ...DEFAULTS, ...s };
    } catch {
        return { ...DEFAULTS };
    }
}

export function saveSettings(s: Settings): void {
    try {
        localStorage.setItem(KEY, JSON.stringify(s));
    } catch {
        /* ignore */
    }
}

/** The Temporal UI page of one workflow execution. */
export function temporalWorkflowUrl(workflowId: string): string {
    const s = settings();
    return `${s.temporalUi.replace(/\/+$/, "")}/namespaces/${encodeURIComponent(s.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

export function temporalScheduleUrl(scheduleId: string): string {
    const s = settings();
    return `${s.temporalUi.replace(/\/+$/, "")}/namespaces/${encodeURIComponent(s.namespace)}/schedules/${encodeURIComponent(scheduleId)}`;
}
