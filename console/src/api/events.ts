// The events' calls: the list and one event with its dispatches.
import { useAsync, type Async } from "../ui";
import { acp, unwrap, type Schemas } from "./client";
import { eventsQuery, type EventFilter } from "./query";

export function useEvents(f: EventFilter, cursor: string): Async<Schemas["Page_EventResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/events", { params: { query: eventsQuery(f, cursor) } })), [f.type, f.source, cursor]);
}

export function useEvent(id: string): Async<Schemas["EventResponse"]> {
    return useAsync(() => unwrap(acp().GET("/v1/events/{event_id}", { params: { path: { event_id: id } } })), [id]);
}
