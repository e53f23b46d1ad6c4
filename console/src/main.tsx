import { render } from "preact";
import { App } from "./app";
// In this order: later rules build on the custom properties and base rules of earlier ones.
import "./styles/base.css";
import "./styles/header.css";
import "./styles/controls.css";
import "./styles/tables.css";
import "./styles/timeline.css";
import "./styles/calendar.css";

render(<App />, document.getElementById("app")!);
