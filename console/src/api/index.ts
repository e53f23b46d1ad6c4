// The API as the views use it: the client and sign-in state (client.ts), and
// each view's calls as functions and hooks (activity.ts imported by its view, timeline.ts), so that
// components receive data and callbacks and never build a request.
export * from "./client";
export * from "./timeline";
