// The project every API call acts in: the one the console's address names
// (`/p/<project>/…`), set by the router whenever the address changes, before
// any view asks for anything. null: none named, the key's own project.
import { signal } from "../signal";

export const actingProject = signal<string | null>(null);
