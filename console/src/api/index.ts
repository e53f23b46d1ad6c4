// The API as the views use it: the client and sign-in state (client.ts); each
// resource area's calls, reads as hooks and writes as functions, in a module
// of its own that a view imports (activity.ts, activities.ts, runs.ts, events.ts,
// alerts.ts, sources.ts, subscriptions.ts, schedules.ts, stream.ts, timeline.ts);
// and what the lists ask for, from their URLs (query.ts). Components receive
// data and callbacks and never build a request.
export * from "./client";
export * from "./timeline";
