import { fileURLToPath } from "node:url";
import { defineConfig, type ProxyOptions } from "vite";

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const api = process.env["ACP_URL"] ?? "http://127.0.0.1:7900";
const proxy: Record<string, ProxyOptions> = {
    "/v1": {
        target: api,
        changeOrigin: false,
        // Node holds a response's headers until its first body byte; an idle
        // event stream has none for 15 s, so send them at once.
        configure(server) {
            server.on("proxyRes", (proxyRes, _req, res) => {
                if (String(proxyRes.headers["content-type"] ?? "").startsWith("text/event-stream")) {
                    setImmediate(() => res.flushHeaders());
                }
            });
        },
    },
};

export default defineConfig({
    base: "/console/",
    resolve: {
        alias: {
            "@acp/client": here("../clients/typescript/src/index.ts"),
            "openapi-fetch": here("./node_modules/openapi-fetch"),
        },
    },
    esbuild: {
        jsx: "automatic",
        jsxImportSource: "preact",
        legalComments: "none",
    },
    build: {
        outDir: "dist",
        emptyOutDir: true,
        sourcemap: false,
        target: "es2022",
        reportCompressedSize: true,
        chunkSizeWarningLimit: 400,
    },
    server: { port: 5173, strictPort: true, proxy },
    preview: { port: 4173, strictPort: true, proxy },
});
