import type { JSX } from "preact";
import { newTask, type TaskRow } from "./model";

/** The tasks, run in order: type, name, a webhook's URL, configuration as JSON; at least one. */
export function TaskRows({ tasks, setTasks }: { tasks: TaskRow[]; setTasks: (t: TaskRow[]) => void }): JSX.Element {
    const onTask = (i: number, k: keyof TaskRow, v: string) => setTasks(tasks.map((t, j) => (j === i ? { ...t, [k]: v } : t)));
    return (
        <fieldset>
            <legend>Tasks (run in order)</legend>
            {tasks.map((t, i) => (
                <div class="task-row" key={i} role="group" aria-label={`Task ${i + 1}`}>
                    <label>
                        Task type
                        <input name={`task_type_${i}`} list="task-types" value={t.task_type} onInput={(e) => onTask(i, "task_type", (e.target as HTMLInputElement).value)} />
                    </label>
                    <label>
                        Task name
                        <input name={`task_name_${i}`} value={t.name} onInput={(e) => onTask(i, "name", (e.target as HTMLInputElement).value)} />
                    </label>
                    {t.task_type === "webhook" && (
                        <label class="grow">
                            Webhook URL
                            <input name={`task_url_${i}`} type="url" required value={t.url} onInput={(e) => onTask(i, "url", (e.target as HTMLInputElement).value)} />
                        </label>
                    )}
                    <label class="grow">
                        Task configuration (JSON)
                        <input name={`task_config_${i}`} value={t.config} spellcheck={false} onInput={(e) => onTask(i, "config", (e.target as HTMLInputElement).value)} />
                    </label>
                    <button
                        type="button"
                        class="ghost"
                        disabled={tasks.length === 1}
                        aria-label={`Remove task ${i + 1}`}
                        onClick={() => setTasks(tasks.filter((_, j) => j !== i))}
                    >
                        Remove
                    </button>
                </div>
            ))}
            <datalist id="task-types">
                <option value="noop" />
                <option value="webhook" />
            </datalist>
            <button type="button" class="ghost" onClick={() => setTasks([...tasks, newTask()])}>
                Add task
            </button>
        </fieldset>
    );
}
